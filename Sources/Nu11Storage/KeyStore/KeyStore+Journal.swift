import Foundation
import Nu11Format

/// A tiny intent journal in the key store (`pending/<ID>.json`), so that a crash in the
/// middle of an import or a delete is finished or undone at the start of the next command:
/// an interrupted import leaves the item absent, an interrupted delete completes.
public struct PendingOperation: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case importing, deleting }

    public var operation: Kind
    public var id: ItemID
    public var kind: UInt8
    public var domain: UInt8
    public var album: ItemID?

    public init(_ operation: Kind, id: ItemID, kind: ItemKind, domain: Domain, album: ItemID?) {
        self.operation = operation
        self.id = id
        self.kind = kind.rawValue
        self.domain = domain.rawValue
        self.album = album
    }
}

extension KeyStore {
    var pendingPath: String { POSIX.join(root, "pending") }

    public func markPending(_ operations: [PendingOperation]) throws {
        guard !operations.isEmpty else { return }
        try ProtectedFiles.makeDirectory(pendingPath)
        for op in operations {
            try ProtectedFiles.writeAtomically(Array(try JSONEncoder().encode(op)), to: POSIX.join(pendingPath, op.id.hex + ".json"))
        }
    }

    public func clearPending(_ ids: [ItemID]) throws {
        for id in ids { try ProtectedFiles.remove(POSIX.join(pendingPath, id.hex + ".json")) }
    }

    public func pendingOperations() throws -> [PendingOperation] {
        guard POSIX.exists(pendingPath) else { return [] }
        return try ProtectedFiles.list(pendingPath).compactMap { name in
            guard name.hasSuffix(".json") else { return nil }
            let path = POSIX.join(pendingPath, name)
            guard let op = try? JSONDecoder().decode(PendingOperation.self, from: Data(ProtectedFiles.read(path, limit: 4096))) else {
                try? ProtectedFiles.remove(path)  // a half-written marker: its operation never started
                return nil
            }
            return op
        }
    }
}
