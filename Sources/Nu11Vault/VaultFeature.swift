// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The features of an unlocked vault. `Vault` keeps what every feature shares — the keys,
/// the lock, the clock, the device state, the settings, the preview cache, the audit log and
/// the commit-point rule; each feature is a small type reached from it that owns its own
/// rules, in the folder of the same name:
///
/// | reached as | folder | owns |
/// |---|---|---|
/// | `vault.items` | `Items/` | resolving an ID, reading, staging and committing, deleting (the one `Shredder`), listing, fade, duplicates |
/// | `vault.albums` | `Albums/` | album names (sealed), creating, renaming, deleting, moving items |
/// | `vault.notes` | `Notes/` | notes: add, read, edit |
/// | `vault.photos` | `Photos/` | thumbnails (made at import, backfilled), location stripping on export |
/// | `vault.archives` | `Archive/` | export and import of archives |
/// | `vault.sharing` | `Sharing/` | the vault's age identity, shares to age recipients, importing age files |
/// | `vault.maintenance` | `Maintenance/` | `check`, key rotation (`rekey`), content re-encryption |
/// | `vault.profiles` | `Profiles/` | PIN change, backup vault, duress PIN, Skeleton Switch, TPM, recovery phrase |
///
/// A feature calls another one through its type (`vault.albums.names()`), never through
/// `Vault`; a feature holds no state of its own (what outlives a call is on `Vault`, so
/// `lock()` zeroes everything in one place).
protocol VaultFeature {
    var vault: Vault { get }
}

extension VaultFeature {
    var location: VaultLocation { vault.location }
    var keyStore: KeyStore { vault.keyStore }
    var index: VaultIndex { vault.index }
    var settings: Settings { vault.settings }
    var role: DomainKeys.Role { vault.role }
    var now: Double { vault.now }
    var mainDomain: Domain { vault.mainDomain }
    var visibleDomains: [Domain] { vault.visibleDomains }
    var previewCache: PreviewCache<CachedPart> { vault.previewCache }
    var state: DeviceState {
        get { vault.state }
        nonmutating set { vault.state = newValue }
    }
    var held: UnlockedKeys { get throws { try vault.held } }
    var keys: DomainKeys { get throws { try vault.keys } }

    func domainKey(_ domain: Domain) throws -> SecretBytes { try vault.domainKey(domain) }
    func metadataKey(_ domain: Domain) throws -> SecretBytes { try vault.metadataKey(domain) }
    func isVisible(_ row: ItemRow) -> Bool { vault.isVisible(row) }
    func isListed(_ row: ItemRow) -> Bool { vault.isListed(row) }
    func visibleRows(kind: ItemKind?, album: ItemID?? = .none, afterSeq: Int64, limit: Int) throws -> [ItemRow] {
        try vault.visibleRows(kind: kind, album: album, afterSeq: afterSeq, limit: limit)
    }
    func saveState() throws { try vault.saveState() }

    func notice(_ message: String, remedy: Remedy? = nil) { vault.notice(message, remedy: remedy) }
    func afterCommit(_ what: String, _ body: () throws -> Void) { vault.afterCommit(what, body) }
    func commitStep(_ what: String, _ body: () throws -> Void) throws { try vault.commitStep(what, body) }
    func audit(_ event: String, count: Int? = nil, items: [ItemID] = [], detail: String? = nil) {
        vault.audit(event, count: count, items: items, detail: detail)
    }
    func audit(_ event: String, ids: [ItemID], detail: String? = nil) { vault.audit(event, ids: ids, detail: detail) }
    func forgetCached(_ id: ItemID) { vault.forgetCached(id) }
    func evictExpiredPreviews() { vault.evictExpiredPreviews() }
}

/// Items: resolve, read, stage and commit, delete, list (see `Items/`).
public struct Items: VaultFeature { let vault: Vault }
/// Albums (see `Albums/`).
public struct Albums: VaultFeature { let vault: Vault }
/// Notes (see `Notes/`).
public struct Notes: VaultFeature { let vault: Vault }
/// Thumbnails and photo metadata (see `Photos/`).
public struct Photos: VaultFeature { let vault: Vault }
/// Archive export and import (see `Archive/`).
public struct Archives: VaultFeature { let vault: Vault }
/// Sharing with age recipients and receiving age files (see `Sharing/`).
public struct Sharing: VaultFeature { let vault: Vault }
/// Devices sharing the vault folder: pairing, item keys for the other devices (see `Sync/`).
public struct Devices: VaultFeature { let vault: Vault }
/// Check, key rotation, content re-encryption (see `Maintenance/`).
public struct Maintenance: VaultFeature { let vault: Vault }
/// The PINs and what they open: PIN change, backup vault, duress, Skeleton Switch, TPM,
/// recovery phrase (see `Profiles/`).
public struct Profiles: VaultFeature { let vault: Vault }

extension Vault {
    public var items: Items { Items(vault: self) }
    public var albums: Albums { Albums(vault: self) }
    public var notes: Notes { Notes(vault: self) }
    public var photos: Photos { Photos(vault: self) }
    public var archives: Archives { Archives(vault: self) }
    public var sharing: Sharing { Sharing(vault: self) }
    public var devices: Devices { Devices(vault: self) }
    public var maintenance: Maintenance { Maintenance(vault: self) }
    public var profiles: Profiles { Profiles(vault: self) }
}
