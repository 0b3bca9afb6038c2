// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// A tiny intent journal in the key store (`pending/<ID>.json`), so that a crash in the
/// middle of an import or a delete is finished or undone at the start of the next command:
/// an interrupted import leaves the item absent, an interrupted delete completes, and an
/// item replaced by a commit (a note edit, fade set) is shredded once the commit's index
/// transaction removed its row — never before.
public struct PendingOperation: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case importing, deleting, replacing
        /// An item moving to the domain `to` with the same ID (`fade set`, FORMAT.md §4.6):
        /// `domain` is the one it leaves.
        case moving
    }

    public var operation: Kind
    public var id: ItemID
    public var kind: UInt8
    public var domain: UInt8
    public var album: ItemID?
    /// Whether the item is overwritten before it is unlinked when the operation is finished
    /// (a `delete --secure`, or the deletion mode when it was recorded). Absent in markers
    /// written before it existed: the deletion mode then decides.
    public var secure: Bool?
    /// `moving` only: the domain the item moves to.
    public var to: UInt8?
    /// `moving` only: the commit point passed (the index row changed its domain), written
    /// right after it: the next command finishes the move whatever the index says by then (a
    /// lost or older index put back must not undo a committed move). Absent before it.
    public var committed: Bool?

    public init(_ operation: Kind, id: ItemID, kind: ItemKind, domain: Domain, album: ItemID?, secure: Bool? = nil,
                to: Domain? = nil) {
        self.operation = operation
        self.to = to?.rawValue
        self.id = id
        self.kind = kind.rawValue
        self.domain = domain.rawValue
        self.album = album
        self.secure = secure
    }
}

extension PendingOperation {
    /// A batch marker's JSON, written by hand: the same array of objects `JSONEncoder` wrote
    /// (every value is a name, a hex ID, a number or a flag: nothing to escape), which
    /// `pendingOperations` decodes. The encoder took a twentieth of a folder import's sealing
    /// thread for a marker of 256 operations per group.
    static func json(_ operations: [PendingOperation]) -> [UInt8] {
        var out = "["
        out.reserveCapacity(2 + operations.count * 160)
        for (i, op) in operations.enumerated() {
            if i > 0 { out += "," }
            out += "{\"operation\":\"\(op.operation.rawValue)\",\"id\":\"\(op.id.hex)\",\"kind\":\(op.kind),\"domain\":\(op.domain)"
            if let album = op.album { out += ",\"album\":\"\(album.hex)\"" }
            if let secure = op.secure { out += ",\"secure\":\(secure)" }
            if let to = op.to { out += ",\"to\":\(to)" }
            if let committed = op.committed { out += ",\"committed\":\(committed)" }
            out += "}"
        }
        out += "]"
        return Array(out.utf8)
    }
}

extension KeyStore {
    var pendingPath: String { layout.pending }

    /// One marker for a whole batch (group commit of many imports).
    /// A failure after the marker took effect is marked `tookEffect`; the path is then
    /// unknown to the caller, and the next command finds the marker.
    public func markPendingBatch(_ operations: [PendingOperation]) throws -> String {
        try ProtectedFiles.makeDirectory(pendingPath)
        let path = POSIX.join(pendingPath, "batch-" + Hex.encode(SecureRandom.bytes(8)) + ".json")
        try ProtectedFiles.writeAtomically(PendingOperation.json(operations), to: path)
        return path
    }

    public func clearPendingBatch(_ path: String) throws { try ProtectedFiles.remove(path) }

    /// Replaces a batch marker's operations (atomically, in place).
    public func rewritePendingBatch(_ path: String, _ operations: [PendingOperation]) throws {
        try ProtectedFiles.writeAtomically(PendingOperation.json(operations), to: path)
    }

    /// Every pending operation, with the marker file that holds it.
    public func pendingOperations() throws -> [(PendingOperation, String)] {
        guard POSIX.exists(pendingPath) else { return [] }
        var out: [(PendingOperation, String)] = []
        for name in try ProtectedFiles.list(pendingPath) where name.hasSuffix(".json") {
            let path = POSIX.join(pendingPath, name)
            let data = Data(try ProtectedFiles.read(path, limit: 64 << 20))
            if let op = try? JSONDecoder().decode(PendingOperation.self, from: data) {
                out.append((op, path))
            } else if let ops = try? JSONDecoder().decode([PendingOperation].self, from: data) {
                out += ops.map { ($0, path) }
            } else {
                try? ProtectedFiles.remove(path)  // a half-written marker: its operation never started
            }
        }
        return out
    }

    /// Makes everything written so far on the key store's file system durable at once.
    public func syncFileSystem() throws { try ProtectedFiles.syncFileSystem(root) }
}
