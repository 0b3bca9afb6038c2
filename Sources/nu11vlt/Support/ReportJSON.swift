// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Storage
import Nu11Vault

/// The JSON shapes of the core's reports (docs/JSON.md) are the command line's: every key is
/// present, `null` for what is unknown or does not apply, so a script can rely on the keys.
struct JSONObject: Encodable {
    let fields: [(String, (any Encodable)?)]
    init(_ fields: [(String, (any Encodable)?)]) { self.fields = fields }

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for (name, value) in fields {
            if let value { try c.encode(value, forKey: Key(stringValue: name)) } else { try c.encodeNil(forKey: Key(stringValue: name)) }
        }
    }
}

extension VaultInfo {
    /// `sync`: the Syncthing folder holding the vault folder, found once by the caller (it also warns).
    func json(sync: SyncthingFolder?) -> JSONObject {
        JSONObject([("vaultPath", vaultPath), ("keyStorePath", keyStorePath), ("initialized", initialized),
                    ("kdfIterations", kdfIterations), ("kdfMemoryMiB", kdfMemoryMiB), ("backupsExcluded", backupsExcluded),
                    ("items", items), ("albums", albums), ("fadeItems", fadeItems),
                    ("sync", sync?.json)])
    }
}

extension SkeletonStatus {
    var json: JSONObject {
        JSONObject([("enabled", enabled), ("interval", interval), ("lastCheckin", lastCheckin), ("deadline", deadline),
                    ("secondsLeft", secondsLeft), ("secure", secure)])
    }
}

extension CheckReport {
    var json: JSONObject {
        JSONObject([("itemsChecked", itemsChecked), ("ok", ok), ("rebuilt", rebuilt.map(\.json)), ("failures", failures.map(\.json)),
                    ("warnings", warnings.map(\.json))])
    }
}

extension CheckReport.Finding {
    var json: JSONObject { JSONObject([("item", item), ("problem", problem), ("repaired", repaired)]) }
}

extension ArchiveInfo {
    var json: JSONObject {
        JSONObject([("kind", kind), ("version", version), ("kdfIterations", kdfIterations), ("kdfMemoryMiB", kdfMemoryMiB),
                    ("entries", entries), ("items", items)])
    }
}

extension KeyStore.TPMStatus {
    var json: JSONObject {
        JSONObject([("enrolled", enrolled), ("thisTPM", thisTPM), ("pcrs", pcrs), ("nvIndex", nvIndex),
                    ("lockoutFailures", lockoutFailures), ("lockoutMaxTries", lockoutMaxTries),
                    ("lockoutIntervalSeconds", lockoutIntervalSeconds), ("wrongPINsLeft", wrongPINsLeft),
                    ("limitResetBy", limitResetBy), ("skeletonArmedInTPM", skeletonArmedInTPM),
                    ("skeletonRestartsLeft", skeletonRestartsLeft), ("skeletonSecondsLeft", skeletonSecondsLeft),
                    ("problem", problem)])
    }
}
