// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What `device add` made.
public struct DeviceAddReport: Sendable, Codable, Equatable {
    public var device: String
    public var pairedWith: String
    /// Items of the other devices this device lists now.
    public var items: Int
    /// What failed after the join took effect (the join stands).
    public var unfinished: [String] = []
}

extension LockedVault {
    /// Joins a vault folder another device shares (docs/FORMAT.md § 9.6): the pairing code
    /// opens the offer in `Devices/`, whose keys — the vault's main and archive keys, not the
    /// Fade key — go into a new key store here, under this device's own PIN, device key and
    /// settings. The key store is built beside its place and renamed in; an existing key store is
    /// never touched. Then this device's own index is made and the other devices' items come in
    /// as at every unlock. The offer is destroyed: a code opens once.
    public func addDevice(code: SecretBytes, pin: SecretBytes, parameters: KDFParameters, name: String,
                          clock: any VaultClock = SystemClock()) throws -> DeviceAddReport {
        try Self.validateNewPIN(pin)
        try parameters.validateChosen()
        try DeviceNames.validate(name)
        let target = KeyStore(root: location.keyStoreRoot)
        guard !target.exists, ProtectedFiles.kind(location.keyStoreRoot).map({ $0 == .directory }) ?? true else {
            throw Nu11Error(.alreadyExists, "a key store already exists at \(location.keyStoreRoot); nothing was changed",
                            remedy: .otherKeyStore, item: location.keyStoreRoot)
        }
        let devices = location.devicesFolder
        let offers = ((try? ProtectedFiles.list(devices)) ?? []).filter { $0.hasSuffix("." + PairingOffer.fileExtension) }.sorted()
        guard !offers.isEmpty else {
            throw Nu11Error(.notFound, "no pairing offer in \(devices) (the first device has not paired yet, or the folder has not synced)",
                            remedy: .advice(.newPairingCode), item: location.vaultRoot)
        }
        let lock = try FileLock(path: location.lockPath)
        defer { withExtendedLifetime(lock) {} }
        var found: (offer: PairingOffer, keys: DomainKeys, path: String)?
        for name in offers {
            let path = devices + "/" + name
            guard let bytes = try? ProtectedFiles.read(path, limit: 4096),
                  let (offer, keys) = try? PairingOffer.open(bytes, code: code) else { continue }
            found = (offer, keys, path)
            break
        }
        guard let found else {
            throw Nu11Error(.authenticationFailed, "the pairing code opens none of the \(offers.count) pairing offer(s) in \(devices); nothing was written",
                            remedy: .advice(.typePairingCode))
        }
        guard Int64(clock.wallTime()) < found.offer.expires else {
            throw Nu11Error(.authenticationFailed, "the pairing offer expired (it is good for an hour); nothing was written",
                            remedy: .advice(.newPairingCode))
        }
        // This device's index is its own (never synced), made first: one already here (a run cut
        // short, or a folder copied with its index) must be this vault's.
        for folder in location.folders { try ProtectedFiles.makeDirectory(folder) }
        let index = try VaultIndex(path: location.indexPath)
        switch try index.vaultID() {
        case nil: try index.recordVaultID(found.offer.vaultID)
        case found.offer.vaultID?: break
        case _?: throw Pairing.mismatch(location, "the folder's index belongs to another vault than the pairing offer")
        }
        let parent = (location.keyStoreRoot as NSString).deletingLastPathComponent
        if ProtectedFiles.kind(parent) == nil { try ProtectedFiles.makeDirectory(parent) }
        let temp = location.keyStoreRoot + ".joining"
        if ProtectedFiles.kind(temp) != nil { try Self.destroyFolder(temp) }
        let device = ItemID()
        do {
            let (store, unlocked) = try KeyStore.create(root: temp, pin: pin, parameters: parameters, keys: found.keys)
            try store.recordVaultID(found.offer.vaultID)
            _ = try store.recordSyncDeviceID(device)
            var state = DeviceState(now: 0)
            _ = EffectiveTime.advance(&state, clock: clock)
            state.settingsSaved = true
            try store.saveState(state)
            try store.saveSettings(Settings(), tagKey: Vault.settingsKey(unlocked.keys))
            try AuditTrail.append([AuditEntry(time: state.latestSeen, event: "device add", detail: "joined the vault shared by device \(found.offer.device.hex)")],
                                  keys: unlocked.keys, keyStore: store, maxBytes: Settings().logMaxKiB << 10, now: state.latestSeen)
            try AuditTrail.writeDecoy(keyStore: store, now: state.latestSeen)
            try store.writeEscrowDecoy()
            try store.writeSecurityKeyDecoy()
            let record = DeviceRecord(id: device, name: name, added: Int64(clock.wallTime()))
            try ProtectedFiles.writeAtomically(try record.sealed(vaultID: found.offer.vaultID, main: found.keys.main),
                                               to: location.deviceRecordPath(device))
            if ProtectedFiles.kind(location.keyStoreRoot) == .directory { _ = rmdir(location.keyStoreRoot) }  // an empty folder only
        } catch {  // before the commit point: nothing stays
            try? Self.destroyFolder(temp)
            try? ProtectedFiles.remove(location.deviceRecordPath(device))
            throw error
        }
        var report = DeviceAddReport(device: device.hex, pairedWith: found.offer.device.hex, items: 0)
        do {
            try ProtectedFiles.move(temp, to: location.keyStoreRoot)  // the commit point
        } catch let error as Nu11Error where error.tookEffect {
            // Renamed into place; only the fsync after it failed: joined, and said so.
            report.unfinished.append("the new key store may not survive a power cut yet (\(error.message))")
        } catch {
            try? Self.destroyFolder(temp)
            try? ProtectedFiles.remove(location.deviceRecordPath(device))
            throw error
        }
        // Joined. The offer goes (a code opens once); failing, it does not undo the join.
        do { try ProtectedFiles.overwriteAndRemove(found.path) } catch {
            report.unfinished.append("the pairing offer could not be removed (\(Vault.describe(error))); it expires within the hour, and `device pair` removes it then")
        }
        return report
    }
}
