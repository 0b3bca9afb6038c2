// SPDX-License-Identifier: GPL-3.0-or-later

/// Which settings loosen a protection, and how they apply when the file was not saved by the
/// vault that reads it (FORMAT.md §4.5). The settings file is sealed under the device key, so
/// whoever can read the key store can rewrite it; only its tag (a key of the saving vault's,
/// behind the PIN) says the vault's owner set the values.
extension Settings {
    /// Every setting one of whose values is looser than another (weakens a protection). Such a
    /// value applies only when the file's tag verifies for the unlocking vault; otherwise the
    /// value the vault last saved (its sealed copy), or the default when there is none, applies
    /// whenever it is stricter. `pin.erase_after` is not among them: it is applied on a wrong
    /// PIN, before any key exists that could check a tag (docs/THREAT-MODEL.md).
    public static let looseningKeys = [
        "backup.allow", "deletion.mode", "export.strip_location", "fade.default", "kdf.iterations",
        "kdf.memory_mib", "keys.rotate_days", "lock.idle", "log.max_kib", "preview.cache_mib",
    ]

    /// How loose this value of `key` is (larger is looser); nil where every change counts as
    /// loosening (a KDF cost: lower is weaker, higher can stall every unlock).
    func looseness(_ key: String) -> Double? {
        switch key {
        case "backup.allow": allowBackups ? 1 : 0
        case "deletion.mode": deletionMode == .secure ? 0 : 1
        case "export.strip_location": stripLocation ? 0 : 1
        case "fade.default": fadeDefault  // fade items live longer
        case "keys.rotate_days": rotateDays == 0 ? .infinity : Double(rotateDays)
        case "lock.idle": lockIdle == 0 ? .infinity : lockIdle
        case "log.max_kib": -Double(logMaxKiB)  // a smaller log forgets sooner
        case "preview.cache_mib": Double(previewCacheMiB)  // more decrypted previews held in memory
        default: nil
        }
    }

    /// Whether this value of `key` is looser than `other`'s.
    public func isLooser(_ key: String, than other: Settings) -> Bool {
        guard let mine = looseness(key), let theirs = other.looseness(key) else {
            return (try? value(key)) != (try? other.value(key))
        }
        return mine > theirs
    }

    /// Takes `other`'s value of `key`.
    mutating func take(_ key: String, from other: Settings) {
        switch key {
        case "backup.allow": allowBackups = other.allowBackups
        case "deletion.mode": deletionMode = other.deletionMode
        case "export.strip_location": stripLocation = other.stripLocation
        case "fade.default": fadeDefault = other.fadeDefault
        case "kdf.iterations": kdfIterations = other.kdfIterations
        case "kdf.memory_mib": kdfMemoryMiB = other.kdfMemoryMiB
        case "keys.rotate_days": rotateDays = other.rotateDays
        case "lock.idle": lockIdle = other.lockIdle
        case "log.max_kib": logMaxKiB = other.logMaxKiB
        case "preview.cache_mib": previewCacheMiB = other.previewCacheMiB
        case "pin.erase_after": eraseAfterFailures = other.eraseAfterFailures
        default: break
        }
    }

    /// The settings as they apply to the vault whose settings key is `key`, and the loosening
    /// keys whose value in the file was not applied. A file that vault tagged applies as it is;
    /// otherwise each loosening value that is looser than the vault's own (its sealed copy,
    /// else the default) is replaced by that one.
    public func effective(under key: SecretBytes) -> (Settings, reverted: [String]) {
        if authenticated(under: key) { return (self, []) }
        return bounded(by: authenticCopy(under: key) ?? Settings())
    }

    /// These settings with every loosening value no looser than `base`'s, and the keys that moved.
    public func bounded(by base: Settings) -> (Settings, reverted: [String]) {
        var applied = self
        var reverted: [String] = []
        for key in Self.looseningKeys where isLooser(key, than: base) {
            applied.take(key, from: base)
            reverted.append(key)
        }
        return (applied, reverted)
    }

    /// These settings with every loosening value no looser than its default, and the keys that moved.
    public func withoutLoosening() -> (Settings, reverted: [String]) { bounded(by: Settings()) }

    /// The values the vault whose settings key is `key` saved (its sealed copy), if the file
    /// carries one that opens under it.
    public func authenticCopy(under key: SecretBytes) -> Settings? {
        guard let authCopy, let plain = try? SmallSeal.open(authCopy, key: Self.copyKey(key), associatedData: Self.copyAAD) else {
            return nil
        }
        var settings = Settings()
        for line in String(decoding: plain, as: UTF8.self).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            try? settings.set(String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
        return settings
    }

    static func copyKey(_ tagKey: SecretBytes) -> SecretBytes { Subkey.derive(from: tagKey, purpose: "settings copy") }
    static let copyAAD = Array("nu11vlt settings copy v1".utf8)
}
