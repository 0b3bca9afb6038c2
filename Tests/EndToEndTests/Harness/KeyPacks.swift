// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The key packs read as someone with the files would, from docs/FORMAT.md §4.3 alone (not
/// through nu11vlt): `keys/<first ID byte, hex>.n11p`, an 8-byte header, then 84-byte slots.
extension CLI {
    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// The pack that holds (or would hold) item `id`'s key record.
    func keyPack(_ id: String) -> String { keystore + "/keys/\(id.prefix(2).lowercased()).n11p" }

    /// Where `id`'s record is: the pack and the record's byte offset in it.
    func keyRecordLocation(_ id: String) -> (path: String, offset: Int)? {
        let path = keyPack(id)
        guard let bytes = FileManager.default.contents(atPath: path).map(Array.init), bytes.count >= 8,
              bytes.prefix(4).elementsEqual("N11P".utf8), let idBytes = hexBytes(id) else { return nil }
        var offset = 8
        while offset + 84 <= bytes.count {
            if bytes[offset..<(offset + 4)].elementsEqual("N11R".utf8), bytes[(offset + 8)..<(offset + 24)].elementsEqual(idBytes) {
                return (path, offset)
            }
            offset += 84
        }
        return nil
    }

    /// The record's 84 bytes, if the pack holds one for `id`.
    func keyRecordBytes(_ id: String) -> [UInt8]? {
        guard let (path, offset) = keyRecordLocation(id), let bytes = FileManager.default.contents(atPath: path) else { return nil }
        return Array(bytes[offset..<(offset + 84)])
    }

    func hasKeyRecord(_ id: String) -> Bool { keyRecordLocation(id) != nil }

    /// Every record in every pack, by item ID (hex).
    func allKeyRecords(in store: String? = nil) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let folder = (store ?? keystore) + "/keys"
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".n11p") {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            var offset = 8
            while offset + 84 <= bytes.count {
                let slot = Array(bytes[offset..<(offset + 84)])
                if slot.prefix(4).elementsEqual("N11R".utf8) {
                    out[slot[8..<24].map { String(format: "%02x", $0) }.joined()] = slot
                }
                offset += 84
            }
        }
        return out
    }

    /// Turns the key store back into layout 1 (FORMAT.md §4.3): every record into its own
    /// `items/<ID>.key`, and no `keys/` folder. Returns the IDs.
    @discardableResult
    func convertToLayoutOne(_ store: String? = nil) throws -> [String] {
        let root = store ?? keystore
        let records = try allKeyRecords(in: root)
        try FileManager.default.createDirectory(atPath: root + "/items", withIntermediateDirectories: true)
        for (id, slot) in records {
            try Data(slot).write(to: URL(fileURLWithPath: root + "/items/\(id).key"))
            chmod(root + "/items/\(id).key", 0o600)
        }
        try FileManager.default.removeItem(atPath: root + "/keys")
        return Array(records.keys)
    }

    private func hexBytes(_ hex: String) -> [UInt8]? {
        let chars = Array(hex.lowercased().utf8)
        guard chars.count == 32 else { return nil }
        return stride(from: 0, to: 32, by: 2).compactMap { UInt8(String(decoding: chars[$0..<($0 + 2)], as: UTF8.self), radix: 16) }
    }
}
