// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Nonce uniqueness per CALLER of `SmallSeal` and `KeyWrap` (issue 57): the seal functions draw
/// a random nonce, but a caller may pass its own (the internal `nonce:` overloads) or a
/// refactor may make one constant. So every call site is listed here (a scan of Sources fails
/// when a new one appears that the list does not name), and the files they write are read on
/// disk after two writes — of the same content where the command allows it — and the
/// nonces compared: the device state (a normal unlock, a wrong PIN's count, a Fade schedule),
/// the settings, the master record's slots, the vault ID, the escrow, the item key packs,
/// the sidecars (their own seal and their recovery seal), album names, every record of the
/// audit log, and the index's metadata rows.
@Suite("nonce uniqueness: every caller of SmallSeal and KeyWrap, on disk")
struct NonceCallersTests {
    /// Every file that calls a sealing function, with how many call sites, and where on disk
    /// this test sees what it writes ("—" and a reason for the few it cannot reach here).
    static let callers: [String: (sites: Int, seen: String)] = [
        "Nu11Format/State/DeviceState.swift": (1, "state.n11s @5"),
        "Nu11Format/State/Settings.swift": (2, "settings.n11c @5 (the inner `copy` seal is inside it, opened only with the key)"),
        "Nu11Format/State/VaultIDRecord.swift": (1, "vault-id.n11v @5, two vaults"),
        "Nu11Format/Keys/MasterRecord.swift": (1, "master.n11k slots @32, @188, @344"),
        "Nu11Format/Envelope/SidecarEnvelope.swift": (1, "Meta/*.n11m @116"),
        "Nu11Format/Keys/RecoveryRecord.swift": (2, "Meta/*.n11m recovery seal @56 (RecoverySeal); recovery.n11r — by format only"),
        "Nu11Format/Log/AuditLogFile+Open.swift": (1, "log/*.n11l, every record"),
        "Nu11Storage/KeyStore/KeyStore+Escrow.swift": (1, "escrow.n11e @8, two vaults"),
        "Nu11Vault/Items/Writing/ItemStaging.swift": (1, "keys/*.n11p records @24"),
        "Nu11Vault/Recover.swift": (1, "— recover re-seals item key records (as ItemStaging; RecoverTests)"),
        "Nu11Vault/Recover+Folder.swift": (1, "— recover from the folder (as ItemStaging)"),
        "Nu11Vault/ItemMetadata.swift": (2, "index.sqlite item.meta"),
        "Nu11Vault/Albums/Albums.swift": (1, "Meta/*.n11a @24"),
        "Nu11Vault/Items/ListingFile.swift": (1, "— listing.n11g: written by the app's gallery or a 1,000-item import only"),
        "Nu11Vault/Maintenance/KeyRotation.swift": (1, "— album names re-sealed by a rotation (as Albums)"),
        "Nu11Vault/Maintenance/RecoveredEntries.swift": (1, "— album names re-sealed by recover (as Albums)"),
        "Nu11Vault/Maintenance/IndexRebuild.swift": (1, "— album names re-sealed by a rebuild (as Albums)"),
        "Nu11Format/Keys/SecurityKeyRecord.swift": (4, "— security-keys.n11u: needs a FIDO2 key (SecurityKeyTests)"),
        "Nu11Format/Keys/TPMRecord.swift": (1, "— master.n11k v2: needs a TPM (TPMEnrolTests)"),
        "Nu11Format/Keys/ForwardRecord.swift": (1, "— forward/*.n11f: removed by every finished rotation"),
        "Nu11Storage/KeyStore/KeyStore+ArchiveKeys.swift": (2, "— retired archive keys (ArchiveKeyRotationTests)"),
        "Nu11Vault/Archive/ArchiveExport.swift": (1, "— an archive's wrapped item keys (ArchiveTests)"),
        "Nu11Format/Journal/JournalSegment.swift": (1, "— Journal/*.n11j entries: no command writes them yet (JournalFolderTests.noncesOnDisk)"),
        "Nu11Format/Devices/SharedItemKey.swift": (1, "Keys/*.n11w @48 (sharedVaultFiles)"),
        "Nu11Format/Devices/PairingOffer.swift": (2, "Devices/pairing-*.n11x @48, Devices/*.n11v @24 (sharedVaultFiles)"),
        "Nu11Vault/Sync/DeviceAdoption.swift": (1, "keys/*.n11p records of items taken in from another device (sharedVaultFiles)"),
    ]

    /// The call sites in Sources, by file (relative to Sources/): sealing calls only (open/unwrap
    /// reuse nothing), outside the functions' own files.
    static func scan() throws -> [String: Int] {
        let sources = Repo.root.appendingPathComponent("Sources")
        var out: [String: Int] = [:]
        let pattern = /(SmallSeal\.seal(Combined)?|KeyWrap\.wrap|ItemKeyRecord\.seal|Sodium\.chachaSeal)\(/
        guard let walker = FileManager.default.enumerator(atPath: sources.path) else { return out }
        for case let path as String in walker where path.hasSuffix(".swift") {
            if ["Nu11Format/Keys/SmallSeal.swift", "Nu11Format/Keys/KeyWrap.swift"].contains(path) { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            let lines = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            let n = lines.reduce(0) { $0 + $1.matches(of: pattern).count }
            if n > 0 { out[path] = n }
        }
        return out
    }

    @Test("every call site of SmallSeal.seal, KeyWrap.wrap and ItemKeyRecord.seal in Sources is on this test's list")
    func everyCallerListed() throws {
        let found = try Self.scan()
        for (file, n) in found.sorted(by: { $0.key < $1.key }) {
            #expect(Self.callers[file]?.sites == n, "\(file): \(n) sealing call(s), the list says \(Self.callers[file].map { "\($0.sites)" } ?? "none") — check its nonces on disk and add it")
        }
        for file in Self.callers.keys where found[file] == nil {
            Issue.record("\(file) is listed but seals nothing any more: update the list")
        }
    }

    /// The 12 bytes at `offset` of a file.
    static func nonce(_ path: String, at offset: Int) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try #require(bytes.count >= offset + 12, "\(path) is too short for a nonce at \(offset)")
        return Array(bytes[offset..<(offset + 12)])
    }

    static func hex(_ text: String) -> [UInt8] {
        let chars = Array(text)
        return stride(from: 0, to: chars.count - 1, by: 2).compactMap { UInt8(String(chars[$0...($0 + 1)]), radix: 16) }
    }

    /// Every sealed record's nonce in an audit log (FORMAT.md §7).
    static func logNonces(_ path: String) throws -> [[UInt8]] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 24, out: [[UInt8]] = []
        while at + 13 <= bytes.count {
            let length = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = bytes[at + 4]
            let seal = at + 13 + (type == 1 ? 32 : 0)
            guard length >= 9, seal + 12 <= bytes.count else { break }
            out.append(Array(bytes[seal..<(seal + 12)]))
            at += 4 + length
        }
        return out
    }

    /// Records the nonces seen per place and checks none repeats.
    final class Nonces {
        var seen: [String: [[UInt8]]] = [:]
        func add(_ place: String, _ nonce: [UInt8]) { seen[place, default: []].append(nonce) }
        func expectDistinct(minimum: [String: Int]) {
            for (place, list) in seen.sorted(by: { $0.key < $1.key }) {
                #expect(Set(list.map { Data($0) }).count == list.count, "\(place): a nonce repeats across \(list.count) writes")
                #expect(!list.contains([UInt8](repeating: 0, count: 12)), "\(place): an all-zero nonce")
            }
            for (place, n) in minimum {
                #expect((seen[place]?.count ?? 0) >= n, "\(place): only \(seen[place]?.count ?? 0) writes seen, \(n) expected")
            }
        }
    }

    @Test("two writes of each sealed file: the device state, settings, slots, sidecars, packs, albums, log, index rows — no nonce repeats")
    func nonceOnDisk() throws {
        let cli = try CLI()
        try cli.initVault()
        let n = Nonces()
        let ks = cli.keystore
        func state() throws { n.add("state.n11s", try Self.nonce(ks + "/state.n11s", at: 5)) }
        func settings() throws { n.add("settings.n11c", try Self.nonce(ks + "/settings.n11c", at: 5)) }
        func slot0() throws { n.add("master.n11k slot 0", try Self.nonce(ks + "/master.n11k", at: 32)) }
        try state(); try settings(); try slot0()
        // The device state: an unlock, a wrong PIN (the count), a Fade item (the schedule).
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        try state()
        #expect(try cli.with("not the pin", ["list"]).code != 0)
        try state()
        #expect(try cli.run(["import", cli.file("fade.jpg", [0xFF, 0xD8, 0xFF, 0xD8]), "--fade", "2h"], pinStdin: true).code == 0)
        try state()
        // Settings: the same value twice.
        for _ in 0..<2 {
            #expect(try cli.run(["settings", "set", "deletion.mode", "secure"], pinStdin: true).code == 0)
            try settings()
        }
        // Slot 0: the PIN changed and changed back (the same payload).
        for (old, new) in [(cli.pin, "other pin 1"), ("other pin 1", cli.pin)] {
            let r = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(old)\n\(new)\n".utf8))
            #expect(r.code == 0, "pin change: \(r.stderr)")
            try slot0()
        }
        // Sidecars (own seal and recovery seal), packs, index rows: two files of the same size
        // and name (the same content would be skipped as a duplicate).
        #expect(try cli.run(["recovery", "setup"], pinStdin: true).code == 0)
        let ids = try cli.importIDs([cli.file("same.jpg", [0xFF, 0xD8, 0xFF, 0xD9])]) + cli.importIDs([cli.file("same.jpg", [0xFF, 0xD8, 0xFF, 0xDA])])
        #expect(ids.count == 2 && ids[0] != ids[1], "two imports did not make two items: \(ids)")
        for id in ids {
            let sidecar = cli.vault + "/Meta/\(id).n11m"
            n.add("Meta/*.n11m", try Self.nonce(sidecar, at: 116))
            n.add("Meta/*.n11m recovery seal", try Self.nonce(sidecar, at: 56))
        }
        for pack in try FileManager.default.contentsOfDirectory(atPath: ks + "/keys") where pack.hasSuffix(".n11p") {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ks + "/keys/" + pack)))
            var at = 8
            while at + 84 <= bytes.count {
                if bytes[at..<(at + 84)].contains(where: { $0 != 0 }) { n.add("keys/*.n11p", Array(bytes[(at + 24)..<(at + 36)])) }
                at += 84
            }
        }
        let rows = try cli.spawn("/usr/bin/sqlite3", [cli.vault + "/index.sqlite", "select hex(meta) from item"]).out
        for row in rows.split(separator: "\n") where row.count >= 24 {
            n.add("index.sqlite item.meta", Self.hex(String(row.prefix(24))))
        }
        // Album names: two albums.
        for name in ["Trips", "Tribe"] {
            #expect(try cli.run(["album", "create", name], pinStdin: true).code == 0)
        }
        for file in try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Meta") where file.hasSuffix(".n11a") {
            n.add("Meta/*.n11a", try Self.nonce(cli.vault + "/Meta/" + file, at: 24))
        }
        // Every record of every audit log.
        for log in try FileManager.default.contentsOfDirectory(atPath: ks + "/log") where log.hasSuffix(".n11l") {
            for nonce in try Self.logNonces(ks + "/log/" + log) { n.add("log/*.n11l", nonce) }
        }
        // Write-once files: the same in two vaults (a constant nonce repeats across them).
        let other = try CLI()
        for c in [cli, other] {
            if c !== cli { try c.initVault() }
            try c.setBackup("backup-pin")
            let set = try c.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"], input: Data("backup-pin\nduress-pin\n".utf8))
            #expect(set.code == 0, "set-duress: \(set.stderr)")
            n.add("vault-id.n11v", try Self.nonce(c.keystore + "/vault-id.n11v", at: 5))
            n.add("escrow.n11e", try Self.nonce(c.keystore + "/escrow.n11e", at: 8))
            n.add("master.n11k slot 1", try Self.nonce(c.keystore + "/master.n11k", at: 188))
            n.add("master.n11k slot 2", try Self.nonce(c.keystore + "/master.n11k", at: 344))
        }
        n.expectDistinct(minimum: ["state.n11s": 4, "settings.n11c": 3, "master.n11k slot 0": 3, "Meta/*.n11m": 2,
                                   "Meta/*.n11m recovery seal": 2, "keys/*.n11p": 3, "index.sqlite item.meta": 3,
                                   "Meta/*.n11a": 2, "log/*.n11l": 5, "vault-id.n11v": 2, "escrow.n11e": 2,
                                   "master.n11k slot 1": 2, "master.n11k slot 2": 2])
    }

    @Test("a shared vault's files (FORMAT.md § 9.6): key files, pairing offers, device records and the records of items taken in — no nonce repeats")
    func sharedVaultFiles() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase")
        try a.initVault()
        let ids = try a.importIDs([a.file("one.bin", [1]), a.file("two.bin", [1])])
        _ = try DeviceTests.pair(a)
        let code = try DeviceTests.pair(a)
        let n = Nonces()
        for id in ids { n.add("Keys/*.n11w", try Self.nonce(a.vault + "/Keys/\(id).n11w", at: 48)) }
        let offers = try FileManager.default.contentsOfDirectory(atPath: a.vault + "/Devices").filter { $0.hasSuffix(".n11x") }
        for offer in offers { n.add("Devices/pairing-*.n11x", try Self.nonce(a.vault + "/Devices/" + offer, at: 48)) }
        try DeviceTests.sync(a.vault, b.vault)
        #expect(try DeviceTests.add(b, code: code).code == 0)
        for record in try FileManager.default.contentsOfDirectory(atPath: b.vault + "/Devices").filter({ $0.hasSuffix(".n11v") }) {
            n.add("Devices/*.n11v", try Self.nonce(b.vault + "/Devices/" + record, at: 24))
        }
        // The records B wrote for the items it took in, and A's own for the same items.
        for id in ids {
            for cli in [a, b] {
                let record = try #require(cli.keyRecordBytes(id), "no key record of \(id)")
                n.add("keys/*.n11p", Array(record[24..<36]))
            }
        }
        n.expectDistinct(minimum: ["Keys/*.n11w": 2, "Devices/pairing-*.n11x": 2, "Devices/*.n11v": 2, "keys/*.n11p": 4])
    }
}

