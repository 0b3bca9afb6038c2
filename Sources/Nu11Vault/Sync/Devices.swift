// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A shared vault's context for one session (docs/FORMAT.md § 9.6).
struct SharedContext {
    let device: ItemID
    let vaultID: ItemID
    /// `SharedItemKey.key(main:)` of this session's main key.
    let key: SecretBytes
    let generation: UInt32
}

/// What `device pair` made: the code to type on the new device (shown once, never stored).
public struct PairingResult: Sendable {
    public let code: SecretBytes
    public let device: String
    public let expires: Int64
    /// Items whose key file this pairing wrote (those imported before the vault was shared).
    public let keyFilesWritten: Int
}

/// One device of `device list`.
public struct DeviceListing: Sendable, Codable, Equatable {
    public var id: String
    public var name: String?
    public var added: Int64?
    public var thisDevice: Bool
    /// Why the record does not open (damaged, another generation's, a stranger's); nil when it does.
    public var problem: String?

    private enum CodingKeys: String, CodingKey { case id, name, added, thisDevice, problem }

    /// Every key, `null` when it has no value (docs/JSON.md).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(added, forKey: .added)
        try c.encode(thisDevice, forKey: .thisDevice)
        try c.encode(problem, forKey: .problem)
    }
}

extension Devices {
    /// How long a pairing offer stays good.
    public static let offerLifetime: Int64 = 3600

    /// The shared vault's context, or nil when this key store never shared the vault. Only
    /// the primary PIN shares: the backup vault and the duress PIN stay on their device. Kept
    /// for the session once found; "not shared" is asked again each time (one `stat`), so a
    /// session that stays open (the unlock agent, the app) shares from the moment another
    /// process pairs the vault.
    func context() throws -> SharedContext? {
        if let known = vault.sharedContext, known != nil { return known }
        var found: SharedContext?
        if role == .primary, let device = try keyStore.syncDeviceID() {
            guard let vaultID = try vault.cachedVaultID ?? index.vaultID() else {
                throw Nu11Error(.corrupted, "the vault folder's index has no vault ID", remedy: .check(reason: nil))
            }
            vault.cachedVaultID = vaultID
            let keys = try keys
            found = SharedContext(device: device, vaultID: vaultID, key: SharedItemKey.key(main: keys.main), generation: keys.generation)
        }
        if found != nil { vault.sharedContext = .some(found) }
        return found
    }

    /// Whether the vault is shared with other devices from this key store.
    public var isShared: Bool { ((try? context()) ?? nil) != nil }

    /// The key file of a new primary-vault item, staged to be published with it (nil when the
    /// vault is not shared or the item is not the primary vault's).
    func stageKeyFile(row: ItemRow, itemKey: SecretBytes) throws -> AtomicFileWriter? {
        guard row.domain == .vault, let shared = try context() else { return nil }
        try ProtectedFiles.makeDirectory(location.sharedKeysFolder)
        let bytes = try SharedItemKey.seal(itemKey: itemKey, kind: row.kind, id: row.id, vaultID: shared.vaultID,
                                           generation: shared.generation, device: shared.device, key: shared.key)
        return try AtomicFileWriter.staged(bytes, at: location.sharedKeyPath(row.id))
    }

    /// Shares the vault with a new device: this device gets an ID (once) and a device record,
    /// every item of the primary vault gets its key file, and a pairing offer sealed under a
    /// new one-time code is written to `Devices/`. Offers of this device that expired go.
    public func pair(name: String) throws -> PairingResult {
        guard role == .primary else {
            throw Nu11Error(.invalidArgument, "only the primary PIN shares the vault with another device", remedy: .primaryPINOnly)
        }
        try DeviceNames.validate(name)
        guard let vaultID = try vault.cachedVaultID ?? index.vaultID() else {
            throw Nu11Error(.corrupted, "the vault folder's index has no vault ID", remedy: .check(reason: nil))
        }
        let keys = try keys
        let nowSeconds = Int64(now)
        try ProtectedFiles.makeDirectory(location.devicesFolder)
        try ProtectedFiles.makeDirectory(location.sharedKeysFolder)
        let device = try keyStore.recordSyncDeviceID(ItemID())
        vault.sharedContext = nil
        let recordPath = location.deviceRecordPath(device)
        if ProtectedFiles.kind(recordPath) == nil {
            let record = DeviceRecord(id: device, name: name, added: nowSeconds)
            try ProtectedFiles.writeAtomically(try record.sealed(vaultID: vaultID, main: keys.main), to: recordPath)
        }
        let written = try writeMissingKeyFiles(vaultID: vaultID, keys: keys, device: device)
        removeExpiredOffers(of: device, now: nowSeconds)
        let code = RecoveryKey.generate()
        let expires = nowSeconds + Self.offerLifetime
        let offer = try PairingOffer.seal(keys: keys, vaultID: vaultID, device: device, expires: expires, code: code)
        let offerPath = location.devicesFolder + "/pairing-\(ItemID().hex).\(PairingOffer.fileExtension)"
        try ProtectedFiles.writeAtomically(offer, to: offerPath)
        audit("device pair", count: written, detail: "a pairing offer for a new device, good for an hour")
        return PairingResult(code: code, device: device.hex, expires: expires, keyFilesWritten: written)
    }

    /// Key files for the primary vault's items that have none (made before the vault was
    /// shared) or one of an earlier generation, from this key store's records; durable before
    /// the offer exists.
    /// A key file written again keeps the device it names; one written for the first time (an
    /// item made before the vault was shared, which only this device had) names this `device`.
    private func writeMissingKeyFiles(vaultID: ItemID, keys: DomainKeys, device: ItemID) throws -> Int {
        let shared = SharedItemKey.key(main: keys.main)
        // Written as a commit group writes its files, 256 at a time: the temp files, one sync,
        // the renames, one sync (not one sync per file: a vault may hold 100,000 items).
        // Missing, or wrapped under an earlier generation's key (a rekey or PIN change since the
        // last pairing): a device that joins now holds only the current generation.
        func current(_ id: ItemID) -> Bool {
            guard let bytes = try? ProtectedFiles.read(location.sharedKeyPath(id), limit: 256),
                  let head = try? SharedItemKey.head(bytes, id: id) else { return false }
            return head.generation == keys.generation
        }
        let rows = try index.allRows().filter { $0.domain == .vault && !current($0.id) }
        var written = 0
        for start in stride(from: 0, to: rows.count, by: 256) {
            var writers: [AtomicFileWriter] = []
            defer { for writer in writers { writer.abort() } }
            for row in rows[start..<min(start + 256, rows.count)] {
                guard let itemKey = try? keyStore.itemKeyRecord(row.id, domain: .vault).open(domainKey: keys.main) else { continue }
                let earlier = (try? ProtectedFiles.read(location.sharedKeyPath(row.id), limit: 256)).flatMap { try? SharedItemKey.head($0, id: row.id) }
                let bytes = try SharedItemKey.seal(itemKey: itemKey, kind: row.kind, id: row.id, vaultID: vaultID,
                                                   generation: keys.generation, device: earlier?.device ?? device, key: shared)
                writers.append(try AtomicFileWriter.staged(bytes, at: location.sharedKeyPath(row.id)))
            }
            guard !writers.isEmpty else { continue }
            try ProtectedFiles.syncFileSystems([location.vaultRoot])
            for writer in writers { try writer.publish() }
            try ProtectedFiles.syncFileSystems([location.vaultRoot])
            written += writers.count
            writers.removeAll()
        }
        return written
    }

    private func removeExpiredOffers(of device: ItemID, now: Int64) {
        for name in (try? ProtectedFiles.list(location.devicesFolder)) ?? [] where name.hasSuffix("." + PairingOffer.fileExtension) {
            let path = location.devicesFolder + "/" + name
            guard let bytes = try? ProtectedFiles.read(path, limit: 4096), let offer = try? PairingOffer.parse(bytes),
                  offer.device == device, offer.expires <= now else { continue }
            try? ProtectedFiles.overwriteAndRemove(path)
        }
    }

    /// The devices that share the vault, from their records in `Devices/`.
    public func list() throws -> [DeviceListing] {
        guard let vaultID = try vault.cachedVaultID ?? index.vaultID() else { return [] }
        let main = try keys.main
        let me = try keyStore.syncDeviceID()
        var out: [DeviceListing] = []
        for name in ((try? ProtectedFiles.list(location.devicesFolder)) ?? []).sorted() where name.hasSuffix("." + DeviceRecord.fileExtension) {
            guard let id = try? ItemID(hex: String(name.dropLast(DeviceRecord.fileExtension.count + 1))) else { continue }
            var entry = DeviceListing(id: id.hex, thisDevice: id == me)
            do {
                let record = try DeviceRecord.open(try ProtectedFiles.read(location.devicesFolder + "/" + name, limit: 8192),
                                                   id: id, vaultID: vaultID, main: main)
                entry.name = record.name
                entry.added = record.added
            } catch {
                entry.problem = Vault.describe(error)
            }
            out.append(entry)
        }
        return out
    }
}

/// A device's name: what `device list` shows.
enum DeviceNames {
    static func validate(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Nu11Error(.invalidArgument, "a device name is 1 to 64 bytes of text without control characters", remedy: .advice(.otherName))
        }
    }
}
