// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Typed settings with validated ranges (the second seed's typed settings), stored as a
/// versioned key/value document sealed under a device subkey (`settings.n11c` in the key
/// store: magic "N11C" || version 1 || SmallSeal(JSON)). Readable before unlock (the
/// failed-PIN policy must be), changed only after unlock.
///
/// Migrations are append-only and work on the raw dictionary, never on app types.
public struct Settings: Sendable, Equatable {
    public enum DeletionMode: String, Sendable, CaseIterable { case standard, secure }

    public var deletionMode: DeletionMode = .standard
    public var fadeDefault: Double = 86400
    /// Argon2id cost applied at the next PIN change; 0 keeps the current cost.
    public var kdfMemoryMiB: UInt32 = 0
    public var kdfIterations: UInt32 = 0
    /// Erase the vault after this many consecutive wrong PINs; 0 = never.
    public var eraseAfterFailures: Int = 0
    public var previewCacheMiB: Int = 64
    /// Opt into backups of the vault and key store (removes CACHEDIR.TAG / nodump).
    public var allowBackups: Bool = false
    /// Remove photos' locations (GPS) on every export and archive unless told otherwise.
    public var stripLocation: Bool = false
    /// Rotate a vault's domain keys at the first unlock once they are this many days old;
    /// 0 = never (a PIN change and `rekey` rotate anyway).
    public var rotateDays: Int = 0
    /// Bound of each vault's audit log, in KiB; older entries are compacted into a checkpoint.
    public var logMaxKiB: Int = 1024
    /// The tag the file carried (see `authenticated(under:)`); nil for a file saved without one.
    public var authTag: [UInt8]?
    /// The values as the saving vault sealed them beside the tag (see `effective(under:)`).
    public var authCopy: [UInt8]?
    /// The desktop app locks itself after this many seconds without input; 0 = never.
    public var lockIdle: Double = 300

    public init() {}

    /// The schema version this build writes.
    public static let currentVersion = 2

    /// One setting: its key, what it means, and its allowed values.
    public struct Definition: Sendable {
        public let key: String
        public let summary: String
        public let allowed: String
    }

    public static let definitions: [Definition] = [
        Definition(key: "deletion.mode", summary: "how deleted items are destroyed when the delete names no mode (secure or standard)",
                   allowed: "standard | secure"),
        Definition(key: "fade.default", summary: "fade duration used when the fade asked for is \"default\"", allowed: "1s … 3650d (e.g. 30s, 10m, 24h, 7d)"),
        Definition(key: "kdf.memory_mib", summary: "Argon2id memory applied at the next PIN change (0 = keep)",
                   allowed: "0, or 19 … 4096"),
        Definition(key: "kdf.iterations", summary: "Argon2id passes applied at the next PIN change (0 = keep)",
                   allowed: "0, or 2 … 32"),
        Definition(key: "pin.erase_after", summary: "wipe the vault after this many consecutive wrong PINs (0 = never)",
                   allowed: "0, or 3 … 100"),
        Definition(key: "preview.cache_mib", summary: "size of the in-memory preview cache", allowed: "1 … 1024"),
        Definition(key: "backup.allow", summary: "let backup tools copy the vault folder (`backup enable`); never the key store",
                   allowed: "true | false"),
        Definition(key: "export.strip_location", summary: "remove photos' and videos' locations (GPS) on every export and archive export",
                   allowed: "true | false"),
        Definition(key: "keys.rotate_days", summary: "rotate the vault's keys at the first unlock after this many days (0 = never)",
                   allowed: "0, or 1 … 3650"),
        Definition(key: "log.max_kib", summary: "size bound of each vault's audit log; older entries become a checkpoint",
                   allowed: "64 … 65536"),
        Definition(key: "lock.idle", summary: "the desktop app, the interactive shell and the unlock agent lock after this long without use (0 = never)",
                   allowed: "0, or 10s … 24h (e.g. 30s, 5m, 1h)"),
    ]

    public func value(_ key: String) throws -> String {
        switch key {
        case "deletion.mode": deletionMode.rawValue
        case "fade.default": DurationText.format(fadeDefault)
        case "kdf.memory_mib": "\(kdfMemoryMiB)"
        case "kdf.iterations": "\(kdfIterations)"
        case "pin.erase_after": "\(eraseAfterFailures)"
        case "preview.cache_mib": "\(previewCacheMiB)"
        case "backup.allow": allowBackups ? "true" : "false"
        case "export.strip_location": stripLocation ? "true" : "false"
        case "keys.rotate_days": "\(rotateDays)"
        case "log.max_kib": "\(logMaxKiB)"
        case "lock.idle": lockIdle == 0 ? "0" : DurationText.format(lockIdle)
        default: throw Self.unknown(key)
        }
    }

    /// Sets one value after validating it; the error names the allowed range.
    public mutating func set(_ key: String, _ text: String) throws {
        guard let definition = Self.definitions.first(where: { $0.key == key }) else { throw Self.unknown(key) }
        func bad() -> Nu11Error {
            Nu11Error(.invalidArgument, "'\(text)' is not allowed for \(key)", remedy: .advice(.allowedValues(definition.allowed)))
        }
        func int(_ range: ClosedRange<Int>) throws -> Int {
            guard let v = Int(text), range.contains(v) else { throw bad() }
            return v
        }
        switch key {
        case "deletion.mode":
            guard let mode = DeletionMode(rawValue: text) else { throw bad() }
            deletionMode = mode
        case "fade.default":
            guard let seconds = try? DurationText.parse(text) else { throw bad() }
            fadeDefault = seconds
        case "kdf.memory_mib":
            let v = try int(0...4096)
            guard v == 0 || v >= 19 else { throw bad() }
            kdfMemoryMiB = UInt32(v)
        case "kdf.iterations":
            let v = try int(0...32)
            guard v == 0 || v >= 2 else { throw bad() }
            kdfIterations = UInt32(v)
        case "pin.erase_after":
            let v = try int(0...100)
            guard v == 0 || v >= 3 else { throw bad() }
            eraseAfterFailures = v
        case "preview.cache_mib": previewCacheMiB = try int(1...1024)
        case "backup.allow":
            guard text == "true" || text == "false" else { throw bad() }
            allowBackups = text == "true"
        case "export.strip_location":
            guard text == "true" || text == "false" else { throw bad() }
            stripLocation = text == "true"
        case "keys.rotate_days": rotateDays = try int(0...3650)
        case "log.max_kib": logMaxKiB = try int(64...65536)
        case "lock.idle":
            if text == "0" { lockIdle = 0; break }
            guard let seconds = try? DurationText.parse(text), (10...86400).contains(seconds) else { throw bad() }
            lockIdle = seconds
        default: throw Self.unknown(key)
        }
    }

    static func unknown(_ key: String) -> Nu11Error {
        Nu11Error(.invalidArgument, "unknown setting '\(key)'",
                  remedy: .advice(.knownSettings(definitions.map(\.key))))
    }

    // MARK: storage

    public static let magic: [UInt8] = Array("N11C".utf8)
    static let aad = Array("nu11vlt settings v1".utf8)

    /// Append-only migrations of the raw document, version n → n+1.
    static let migrations: [Int: @Sendable ([String: String]) -> [String: String]] = [
        // v1 → v2: `secure_delete` (bool) became `deletion.mode`; `fade_seconds` became
        // `fade.default` as a duration; `thumbnail_cache` (obsolete) is dropped.
        1: { old in
            var new = old
            if let secure = new.removeValue(forKey: "secure_delete") {
                new["deletion.mode"] = secure == "true" ? "secure" : "standard"
            }
            if let seconds = new.removeValue(forKey: "fade_seconds") { new["fade.default"] = "\(seconds)s" }
            new.removeValue(forKey: "thumbnail_cache")
            return new
        },
    ]

    struct Document: Codable {
        var version: Int
        var values: [String: String]
        /// HMAC-SHA-256 (hex) of the values under a key of the vault that saved them (optional:
        /// files without it read as before, and loosen nothing).
        var auth: String?
        /// The same `key=value` lines sealed under a subkey of the tag's key (hex): what the
        /// saving vault set, for when the values beside it were changed by someone else.
        var copy: String?
    }

    /// The values as the tag covers them: `key=value` lines, sorted by key.
    func canonical() throws -> [UInt8] {
        Array(try Self.definitions.map(\.key).sorted().map { "\($0)=\(try value($0))\n" }.joined().utf8)
    }

    /// The tag under `key` (a subkey of the saving vault's keys).
    public func tag(under key: SecretBytes) throws -> [UInt8] {
        let message = try canonical()
        return key.withUnsafeBytes { Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: $0))) }
    }

    /// Whether the file's tag verifies under `key` (constant time).
    public func authenticated(under key: SecretBytes) -> Bool {
        guard let authTag, let expected = try? tag(under: key), authTag.count == expected.count else { return false }
        return zip(authTag, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `tagKey`: the saving vault's settings key; the file then carries the tag and the copy.
    public func sealed(deviceKey: SecretBytes, tagKey: SecretBytes? = nil) throws -> [UInt8] {
        var values: [String: String] = [:]
        for definition in Self.definitions { values[definition.key] = try value(definition.key) }
        let auth = try tagKey.map { Hex.encode(try tag(under: $0)) }
        let copy = try tagKey.map { Hex.encode(try SmallSeal.seal(try canonical(), key: Self.copyKey($0), associatedData: Self.copyAAD)) }
        return try Self.seal(Document(version: Self.currentVersion, values: values, auth: auth, copy: copy), deviceKey: deviceKey)
    }

    static func seal(_ document: Document, deviceKey: SecretBytes) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return magic + [1] + (try SmallSeal.seal(Array(try encoder.encode(document)),
                                                 key: Subkey.derive(from: deviceKey, purpose: "settings"),
                                                 associatedData: aad))
    }

    /// Opens, migrates to the current version, and validates every value. Returns whether a
    /// migration ran (the caller then saves the result).
    public static func open(_ bytes: [UInt8], deviceKey: SecretBytes) throws -> (Settings, migrated: Bool) {
        guard bytes.count > 5, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the settings file is damaged", remedy: .check(reason: nil))
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "settings file version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        let plain = try SmallSeal.open(Array(bytes[5...]), key: Subkey.derive(from: deviceKey, purpose: "settings"),
                                       associatedData: aad)
        return try parseDocument(plain)
    }

    /// The decrypted document: version check, migrations, validation of every value.
    public static func parseDocument(_ plain: [UInt8]) throws -> (Settings, migrated: Bool) {
        guard var document = try? JSONDecoder().decode(Document.self, from: Data(plain)) else {
            throw Nu11Error(.corrupted, "the settings file is damaged", remedy: .check(reason: nil))
        }
        guard document.version >= 1 else { throw Nu11Error(.corrupted, "the settings file is damaged") }
        guard document.version <= currentVersion else {
            throw Nu11Error(.unsupportedVersion,
                            "settings version \(document.version) is newer than this version of Nu11VLT (\(currentVersion))",
                            remedy: .upgrade)
        }
        let migrated = document.version < currentVersion
        while document.version < currentVersion {
            guard let step = migrations[document.version] else {
                throw Nu11Error(.internalError, "no settings migration from version \(document.version)")
            }
            document.values = step(document.values)
            document.version += 1
        }
        var settings = Settings()
        settings.authTag = document.auth.flatMap(Hex.decode)
        settings.authCopy = document.copy.flatMap(Hex.decode)
        for (key, value) in document.values {
            // Keys no longer defined are dropped by the migrations; anything else unknown is
            // ignored rather than fatal, so a damaged value cannot lock the user out.
            if definitions.contains(where: { $0.key == key }) { try settings.set(key, value) }
        }
        return (settings, migrated)
    }

    /// For tests of the migration path: a document of an older version.
    public static func sealLegacy(version: Int, values: [String: String], deviceKey: SecretBytes) throws -> [UInt8] {
        try seal(Document(version: version, values: values, auth: nil, copy: nil), deviceKey: deviceKey)
    }
}
