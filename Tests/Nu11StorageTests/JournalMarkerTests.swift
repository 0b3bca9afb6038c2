// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
@testable import Nu11Storage
import Testing

/// A batch marker is the crash journal of a group commit: what it says must read back exactly,
/// whoever wrote it (the hand-written JSON now, `JSONEncoder` before).
@Suite("journal markers")
struct JournalMarkerTests {
    static let operations: [PendingOperation] = [
        PendingOperation(.importing, id: ItemID(), kind: .file, domain: .vault, album: nil),
        PendingOperation(.importing, id: ItemID(), kind: .note, domain: .fade, album: ItemID()),
        PendingOperation(.replacing, id: ItemID(), kind: .file, domain: .backup, album: nil, secure: true),
        PendingOperation(.deleting, id: ItemID(), kind: .file, domain: .archive, album: ItemID(), secure: false),
    ]

    @Test("the marker's JSON is JSONEncoder's object for object, and decodes to the same operations; an empty batch too")
    func sameAsEncoder() throws {
        for ops in [Self.operations, [], Array(repeating: Self.operations[1], count: 300)] {
            let fast = PendingOperation.json(ops)
            let reference = try JSONEncoder().encode(ops)
            let a = try #require(try JSONSerialization.jsonObject(with: Data(fast)) as? NSArray)
            let b = try #require(try JSONSerialization.jsonObject(with: reference) as? NSArray)
            #expect(a == b)
            #expect(try JSONDecoder().decode([PendingOperation].self, from: Data(fast)) == ops)
        }
    }

    @Test("a marker written by a command is read back by the next: every operation, with its file")
    func roundTrip() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (store, _) = try KeyStore.create(root: root + "/ks", pin: pin("2468"), parameters: .floor)
        let path = try store.markPendingBatch(Self.operations)
        let read = try store.pendingOperations()
        #expect(read.map(\.0) == Self.operations && read.allSatisfy { $0.1 == path })
        try store.clearPendingBatch(path)
        #expect(try store.pendingOperations().isEmpty)
    }
}
