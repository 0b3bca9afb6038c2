// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What `check` verifies beside each item (FORMAT.md §5.3): its sidecar and, in the primary
/// vault with a recovery phrase, its recovery seal; the album name files. The repair rewrites
/// them from the (sound) index, and every seal it writes is fresh, sealed to the current
/// phrase's public key (`vault.recoveryPublicKey`): a seal is never copied out of the folder,
/// where an old sidecar put back carries a revoked phrase's seal.
extension Maintenance {
    /// A fresh recovery seal of `itemKey` for `row`: nil for other domains, another PIN's vault,
    /// or a vault whose recovery data is not in use.
    func freshRecoverySeal(_ row: ItemRow, itemKey: SecretBytes) throws -> [UInt8]? {
        try vault.profiles.recoverySeal(itemKey: itemKey, id: row.id, kind: row.kind, domain: row.domain)
    }

    /// Whether rows of `domain` in this session are sealed to the recovery phrase.
    func sealsToPhrase(_ domain: Domain) -> Bool {
        domain == .vault && role == .primary && vault.recoveryPublicKey != nil
    }

    /// An item's sidecar: sound (it is the item's and opens with its key), missing, or why not.
    enum SidecarState {
        case sound(SidecarEnvelope.Head)
        case missing
        case bad(String)
    }

    func sidecarState(_ row: ItemRow, itemKey: SecretBytes) -> SidecarState {
        let path = location.sidecarPath(row.id)
        guard ProtectedFiles.kind(path) != nil else { return .missing }
        guard let bytes = try? ProtectedFiles.read(path, limit: SidecarEnvelope.maxBytes) else {
            return .bad("its metadata file (\(path)) cannot be read")
        }
        guard let (head, _) = try? ItemSidecar.open(bytes, id: row.id, itemKey: itemKey) else {
            // The item's content opens with this key (verified before): a sidecar newer than
            // this key store would open with it too (an item keeps its key for life), so this
            // one is damaged or another item's.
            return .bad("its metadata file does not open with the item's key (damaged, or another item's)")
        }
        guard head.kind == row.kind, head.domain == row.domain else {
            return .bad("its metadata file names another kind or domain")
        }
        // Without a seal, bytes 24..<116 are zero (FORMAT.md §2.2).
        if head.recoverySeal == nil, bytes[24..<SidecarEnvelope.headBytes].contains(where: { $0 != 0 }) {
            return .bad("its metadata file's recovery seal field is damaged")
        }
        return .sound(head)
    }

    /// Verifies the sidecar and recovery seal of a sound row; with `repair`, rewrites the
    /// sidecar from the index row and seals a fresh recovery seal (index and sidecar).
    /// `seals`: the index's recovery seals. nil when all is well.
    func checkSidecar(_ row: ItemRow, seals: [ItemID: [UInt8]], repair: Bool) throws -> CheckReport.Finding? {
        let itemKey = try keyStore.itemKeyRecord(row.id, domain: row.domain).open(domainKey: domainKey(row.domain))
        var problems: [String] = []
        let state = sidecarState(row, itemKey: itemKey)
        var sidecarSound = false
        switch state {
        case .missing: problems.append("its metadata file (Meta/\(row.id.hex).n11m) is missing, so a lost index would lose its name")
        case .bad(let why): problems.append(why)
        case .sound: sidecarSound = true
        }
        let phrase = sealsToPhrase(row.domain)
        if phrase {
            if seals[row.id] == nil {
                problems.append("it has no recovery seal, so the recovery phrase does not cover it")
            } else if case .sound(let head) = state, head.recoverySeal != seals[row.id] {
                problems.append("its metadata file's recovery seal is not its index entry's (an old copy put back?)")
            }
        }
        guard !problems.isEmpty else { return nil }
        var finding = CheckReport.Finding(item: row.id.hex, problem: problems.joined(separator: "; "))
        guard repair else { return finding }
        if vault.devices.isShared {
            // The sidecar may be another device's file (FORMAT.md § 9.6): never rewritten from
            // here. The index takes the sidecar's seal when it has one.
            if case .sound(let head) = state, let seal = head.recoverySeal, phrase {
                try index.setRecoverySeals([(id: row.id, seal: seal)])
                finding.repaired = "the index entry takes its metadata file's recovery seal (the vault is shared: the metadata file is left as it is)"
            } else {
                finding.problem += " (not repaired: the vault is shared, and its metadata file may be another device's)"
            }
            return finding
        }
        let seal = phrase ? try freshRecoverySeal(row, itemKey: itemKey) : nil
        if let seal { try index.setRecoverySeals([(id: row.id, seal: seal)]) }
        var done: [String] = []
        if sidecarSound {
            if let seal { try SidecarSeals.set(seal, for: row.id, location: location) }
        } else {
            let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
            try writeSidecar(row, meta: meta, seal: seal, itemKey: itemKey)
            done.append("metadata file rewritten from its index entry")
        }
        if seal != nil { done.append("sealed afresh to the current recovery phrase") }
        finding.repaired = done.joined(separator: "; ")
        return finding
    }

    /// Writes an item's sidecar whole (atomic, 0600).
    func writeSidecar(_ row: ItemRow, meta: ItemMetadata, seal: [UInt8]?, itemKey: SecretBytes) throws {
        try ProtectedFiles.makeDirectory(location.metaFolder)
        try ProtectedFiles.writeAtomically(ItemSidecar.seal(row: row, meta: meta, recoverySeal: seal, itemKey: itemKey),
                                           to: location.sidecarPath(row.id))
    }

    static let nameFileOlderOrNewer = "sealed under keys this key store does not hold: an old copy, or this key store is older than the vault folder (then use the newer key store)"

    /// The name file of album `id`: there and opening with this session's key, missing, or
    /// there but not opening (never overwritten: it may be newer than this key store).
    enum NameFileState { case opens, missing, foreign }

    func nameFileState(_ id: ItemID, key: SecretBytes) -> NameFileState {
        let path = location.albumNamePath(id)
        guard ProtectedFiles.kind(path) != nil else { return .missing }
        guard let bytes = try? ProtectedFiles.read(path, limit: AlbumNameFile.maxBytes), let file = AlbumNameFile.decode(bytes),
              file.id == id, (try? SmallSeal.open(file.name, key: key, associatedData: Albums.albumAAD(id))) != nil else {
            return .foreign
        }
        return .opens
    }

    /// Each album of the primary vault whose name opens in the index has a name file that
    /// opens. A missing one is rewritten by `repair`; one that exists but does not open is
    /// never overwritten (it may be newer than this key store): a warning says so.
    func checkAlbumNameFiles(repair: Bool) throws -> (failures: [CheckReport.Finding], warnings: [CheckReport.Finding]) {
        guard role == .primary, mainDomain == .vault else { return ([], []) }
        let key = try metadataKey(.vault)
        var failures: [CheckReport.Finding] = []
        var warnings: [CheckReport.Finding] = []
        for album in try index.albums(domains: [.vault]) {
            guard (try? SmallSeal.open(album.name, key: key, associatedData: Albums.albumAAD(album.id))) != nil else { continue }
            switch nameFileState(album.id, key: key) {
            case .opens: continue
            case .missing:
                var finding = CheckReport.Finding(item: album.id.hex, problem: "the album's name file (Meta/\(album.id.hex).n11a) is missing, so a lost index would lose its name")
                if repair {
                    try vault.albums.writeAlbumNameFile(album)
                    finding.repaired = "rewritten from the index"
                }
                failures.append(finding)
            case .foreign:
                warnings.append(.init(item: album.id.hex, problem: "the album's name file does not open: \(Self.nameFileOlderOrNewer), or damaged; left as it is (renaming the album writes a new one)"))
            }
        }
        return (failures, warnings)
    }
}
