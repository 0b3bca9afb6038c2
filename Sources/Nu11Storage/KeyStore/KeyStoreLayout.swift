// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// Where everything of a key store lives — the one list, like `VaultLocation` for the
/// documents tree (docs/FORMAT.md §4 describes each file):
///
///     <root>/master.n11k          PIN-protected domain keys, three fixed slots
///     <root>/device.n11d          device-bound key (readable before unlock)
///     <root>/state.n11s           sealed device state (failed PINs, fade schedule, Skeleton)
///     <root>/settings.n11c        settings (tagged), and settings.n11c.damaged set aside
///     <root>/vault-id.n11v        the vault's ID, pairing the key store with its vault
///     <root>/vault-folder.n11l    where the vault folder was found after it moved (a hint, clear)
///     <root>/escrow.n11e          the duress escrow (or its decoy), fixed size
///     <root>/security-keys.n11u   the FIDO2 security keys (or a decoy), fixed size
///     <root>/tpm.n11t             a TPM enrolment set aside
///     <root>/swept                the leftover sweep's cache
///     <root>/listing.n11g         the gallery's listing cache (sealed; rebuilt when absent)
///     <root>/sync-device.n11i     this device's ID in a shared vault (clear; FORMAT.md § 9.6)
///     <root>/creating             empty: `init` has not finished (written first, removed last)
///     <root>/keys/<hh>.n11p       the item key records, in 256 packs by the ID's first byte;
///                                 zeroing a record's slot shreds the item
///     <root>/items/<id>.key       loose records (the layout before packs), adopted into packs
///     <root>/pending/             the intent journal (one marker per commit or delete)
///     <root>/quarantine/          key records set aside by the check
///     <root>/forward/             forward records of a rotation chain
///     <root>/log/                 the audit logs and the device journal
///     <root>/archive-keys/        archive keys wrapped under the current keys
///     <root>/deleted/<id>         a shared vault's items this device destroyed (empty files; FORMAT.md § 9.6)
///
/// Folders are 0700, files 0600, every write atomic.
public struct KeyStoreLayout: Sendable, Equatable {
    public let root: String

    public init(root: String) { self.root = root }

    /// The master record's name: what makes a folder a key store.
    public static let masterName = "master.n11k"

    var master: String { POSIX.join(root, Self.masterName) }
    var device: String { POSIX.join(root, "device.n11d") }
    var state: String { POSIX.join(root, "state.n11s") }
    var settings: String { POSIX.join(root, "settings.n11c") }
    var settingsAside: String { settings + ".damaged" }
    var vaultID: String { POSIX.join(root, "vault-id.n11v") }
    var vaultFolder: String { POSIX.join(root, "vault-folder.n11l") }
    var escrow: String { POSIX.join(root, "escrow.n11e") }
    var securityKeys: String { POSIX.join(root, "security-keys.n11u") }
    var tpmAside: String { POSIX.join(root, "tpm.n11t") }
    var swept: String { POSIX.join(root, "swept") }
    var listing: String { POSIX.join(root, "listing.n11g") }
    var creating: String { POSIX.join(root, "creating") }
    var recovering: String { POSIX.join(root, "recover.pending") }
    var syncDevice: String { POSIX.join(root, "sync-device.n11i") }

    var keys: String { POSIX.join(root, "keys") }
    var items: String { POSIX.join(root, "items") }
    var pending: String { POSIX.join(root, "pending") }
    var quarantine: String { POSIX.join(root, "quarantine") }
    var forward: String { POSIX.join(root, "forward") }
    var log: String { POSIX.join(root, "log") }
    var archiveKeys: String { POSIX.join(root, "archive-keys") }
    var deleted: String { POSIX.join(root, "deleted") }

    /// Every file at the top of the key store.
    var files: [String] { [master, device, state, settings, settingsAside, vaultID, vaultFolder, tpmAside, swept, listing, escrow, securityKeys, creating, recovering, syncDevice] }

    /// Every folder inside the key store.
    public var folders: [String] { [keys, items, pending, quarantine, forward, log, archiveKeys, deleted] }

    /// The folders where an interrupted command can leave a temp file (swept at every start).
    public var workFolders: [String] { [keys, items, pending, forward, log, deleted] }

    /// Of those, the one every unlock changes (an audit-log entry): listed at every sweep, not
    /// recorded in `swept` (its time is never the one recorded, so recording it would rewrite
    /// the stamp at every command).
    public var changedByEveryUnlock: String { log }
}
