// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// Issue 55: every setting whose value can loosen a protection applies only when the file was
/// saved by the vault that reads it. The forger holds the device key (it lies in the key
/// store): it can open the file, edit its values and seal it again, but not make the tag.
@Suite("settings that loosen a protection")
struct SettingsLooseningTests {
    struct Case: Sendable, CustomStringConvertible {
        let key: String
        /// What the vault's owner saved (with the tag).
        let saved: String
        /// What the forger writes: looser.
        let forged: String
        var description: String { key }
    }

    static let cases: [Case] = [
        Case(key: "backup.allow", saved: "false", forged: "true"),
        Case(key: "deletion.mode", saved: "secure", forged: "standard"),
        Case(key: "export.strip_location", saved: "true", forged: "false"),
        Case(key: "fade.default", saved: "1h", forged: "3650d"),
        Case(key: "kdf.iterations", saved: "4", forged: "2"),
        Case(key: "kdf.memory_mib", saved: "64", forged: "19"),
        Case(key: "keys.rotate_days", saved: "30", forged: "0"),
        Case(key: "lock.idle", saved: "1m", forged: "0"),
        Case(key: "log.max_kib", saved: "4096", forged: "64"),
        Case(key: "preview.cache_mib", saved: "16", forged: "1024"),
    ]

    @Test("every key that can loosen a protection is listed, and pin.erase_after (applied before any PIN) is the one that is not")
    func coverage() {
        #expect(Set(Settings.looseningKeys) == Set(Self.cases.map(\.key)))
        #expect(Set(Settings.definitions.map(\.key)).subtracting(Settings.looseningKeys) == ["pin.erase_after"])
    }

    /// The forger's edit: the file opened with the device key, one value changed, sealed again
    /// with the tag and the copy it had (or without them).
    static func forge(_ file: [UInt8], device: SecretBytes, _ key: String, _ value: String, keepTag: Bool) throws -> [UInt8] {
        var (forged, _) = try Settings.open(file, deviceKey: device)
        try forged.set(key, value)
        var values: [String: String] = [:]
        for definition in Settings.definitions { values[definition.key] = try forged.value(definition.key) }
        return try Settings.seal(Settings.Document(version: Settings.currentVersion, values: values,
                                                   auth: keepTag ? forged.authTag.map(Hex.encode) : nil,
                                                   copy: keepTag ? forged.authCopy.map(Hex.encode) : nil), deviceKey: device)
    }

    @Test("a forged looser value is not applied: the value the vault saved applies (from its sealed copy), and the key is named", arguments: cases)
    func forgedLooserValue(_ c: Case) throws {
        let device = SecretBytes(randomCount: 32)
        let tagKey = SecretBytes(randomCount: 32)
        var saved = Settings()
        try saved.set(c.key, c.saved)
        let file = try saved.sealed(deviceKey: device, tagKey: tagKey)
        // The saving vault reads its own file as it is.
        let (own, ownReverted) = try Settings.open(file, deviceKey: device).0.effective(under: tagKey)
        #expect(try own.value(c.key) == saved.value(c.key) && ownReverted.isEmpty)

        let forged = try Settings.open(Self.forge(file, device: device, c.key, c.forged, keepTag: true), deviceKey: device).0
        #expect(try forged.value(c.key) == Settings().set(c.key, c.forged, returning: c.key), "the forgery is not what is read")
        #expect(forged.isLooser(c.key, than: saved), "\(c.forged) is not looser than \(c.saved)")
        let (applied, reverted) = forged.effective(under: tagKey)
        #expect(try applied.value(c.key) == saved.value(c.key), "the forged \(c.key) = \(c.forged) was applied")
        #expect(reverted == [c.key])

        // Without the tag and the copy, the looser value is bounded by the default.
        let bare = try Settings.open(Self.forge(file, device: device, c.key, c.forged, keepTag: false), deviceKey: device).0
        let (plain, _) = bare.effective(under: tagKey)
        let plainValue = try plain.value(c.key)
        #expect(!plain.isLooser(c.key, than: Settings()), "\(c.key) = \(plainValue) is looser than the default")
        // Another vault's key (the backup vault): the copy does not open for it; the default bounds it.
        let (foreign, _) = forged.effective(under: SecretBytes(randomCount: 32))
        #expect(!foreign.isLooser(c.key, than: Settings()))
    }

    @Test("a forged stricter value is kept (it loosens nothing), and harmless keys are left alone", arguments: cases)
    func forgedStricterValue(_ c: Case) throws {
        let device = SecretBytes(randomCount: 32)
        let tagKey = SecretBytes(randomCount: 32)
        var saved = Settings()
        try saved.set(c.key, c.forged)  // the owner chose the loose value
        let file = try saved.sealed(deviceKey: device, tagKey: tagKey)
        let forged = try Settings.open(Self.forge(file, device: device, c.key, c.saved, keepTag: true), deviceKey: device).0
        let (applied, reverted) = forged.effective(under: tagKey)
        if forged.isLooser(c.key, than: saved) {
            #expect(try applied.value(c.key) == saved.value(c.key))  // the KDF cost: any change is refused
        } else {
            #expect(try applied.value(c.key) == forged.value(c.key) && reverted.isEmpty)
        }
        #expect(applied.eraseAfterFailures == forged.eraseAfterFailures)
    }
}

extension Settings {
    /// `key`'s value after setting it to `text` (validated as a setting is).
    fileprivate func set(_ key: String, _ text: String, returning: String) throws -> String {
        var copy = self
        try copy.set(key, text)
        return try copy.value(returning)
    }
}
