// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// Retired archive keys (`archive-keys/<id>.n11a`, docs/FORMAT.md §4.8): a rotation gives a
/// vault a new archive key (an old key store copy with the old PIN must not open secure
/// archives or the audit log made after), and keeps each key it replaces wrapped under the
/// new one, so secure archives made before still import. Each rotation re-wraps the older
/// ones under the newest key; the holder of an old archive key opens none of them.
extension KeyStore {
    var archiveKeysFolder: String { layout.archiveKeys }

    static let retiredAAD = Array("N11A retired archive key v1".utf8)

    func retiredPath(_ retired: SecretBytes) -> String {
        let id = Subkey.derive(from: retired, purpose: "retired archive key id").withUnsafeBytes { Array($0.prefix(16)) }
        return POSIX.join(archiveKeysFolder, Hex.encode(id) + ".n11a")
    }

    static func wrappingKey(_ archive: SecretBytes) -> SecretBytes { Subkey.derive(from: archive, purpose: "retired archive keys") }

    /// Keeps `olds` (the archive keys a rotation replaces) under `new`, and re-wraps the keys
    /// retired before under `new`. Idempotent: a rotation resumed after a crash runs it again.
    public func retireArchiveKeys(_ olds: [SecretBytes], under new: SecretBytes) throws {
        let newKey = Self.wrappingKey(new)
        let oldKeys = olds.filter { !$0.constantTimeEquals(new) }.map(Self.wrappingKey)
        try ProtectedFiles.makeDirectory(archiveKeysFolder)
        for name in try ProtectedFiles.list(archiveKeysFolder) where name.hasSuffix(".n11a") {
            let path = POSIX.join(archiveKeysFolder, name)
            guard let bytes = try? ProtectedFiles.read(path, limit: 1024) else { continue }
            if (try? KeyWrap.unwrap(bytes, under: newKey, associatedData: Self.retiredAAD)) != nil { continue }
            for oldKey in oldKeys {
                guard let retired = try? KeyWrap.unwrap(bytes, under: oldKey, associatedData: Self.retiredAAD) else { continue }
                try ProtectedFiles.writeAtomically(KeyWrap.wrap(retired, under: newKey, associatedData: Self.retiredAAD), to: path)
                break
            }
        }
        for old in olds where !old.constantTimeEquals(new) {
            try ProtectedFiles.writeAtomically(KeyWrap.wrap(old, under: newKey, associatedData: Self.retiredAAD), to: retiredPath(old))
        }
    }

    /// The archive keys `current` retired, newest rotation or not (the order is the folder's).
    public func retiredArchiveKeys(under current: SecretBytes) throws -> [SecretBytes] {
        guard POSIX.exists(archiveKeysFolder) else { return [] }
        let key = Self.wrappingKey(current)
        return try ProtectedFiles.list(archiveKeysFolder).filter { $0.hasSuffix(".n11a") }.compactMap { name in
            guard let bytes = try? ProtectedFiles.read(POSIX.join(archiveKeysFolder, name), limit: 1024) else { return nil }
            return try? KeyWrap.unwrap(bytes, under: key, associatedData: Self.retiredAAD)
        }
    }
}
