// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The result of `nu11vlt check`.
public struct CheckReport: Sendable {
    public struct Finding: Sendable {
        public var item: String
        public var problem: String
        public var repaired: String?
    }

    public var itemsChecked = 0
    public var ok = 0
    /// Damaged or missing items, the index, the settings: `check` fails.
    public var failures: [Finding] = []
    /// Index entries a repair rebuilt (from the items' files and sidecars) that are sound now:
    /// counted in `ok` too; what they could not bring back is in `repaired`.
    public var rebuilt: [Finding] = []
    /// Leftovers that harm nothing (temp files, orphans): reported, removed by repair.
    public var warnings: [Finding] = []
    public var passed: Bool { failures.allSatisfy { $0.repaired != nil } }
}

extension Maintenance {
    var quarantineFolder: String { location.vaultRoot + "/Quarantine" }

    /// Verifies every item (key record, header, every chunk, metadata, its sidecar and recovery
    /// seal), the album name files, the index against the files both ways, the index itself,
    /// the settings and the key store. `repair` rebuilds index entries from the vault folder,
    /// rewrites sidecars and name files from a sound index (with fresh recovery seals), moves
    /// damaged items to Quarantine/ and marks them, moves orphan files there too, and removes
    /// temp files; it never deletes anything that still decrypts.
    public func check(repair: Bool, progress: (Int, Int) throws -> Void = { _, _ in }) throws -> CheckReport {
        var report = CheckReport()
        let integrity = try index.integrityCheck()
        if integrity != "ok" { report.failures.append(.init(item: "index", problem: "SQLite integrity check: \(integrity)")) }
        let onDisk = try keyStore.loadSettings()
        if try !onDisk.damaged && role == .primary && !onDisk.settings.authenticated(under: vault.settingsKey()) {
            var finding = CheckReport.Finding(item: "settings", problem: "the settings file does not carry this vault's tag (changed by another program, or saved before tags)")
            if repair {
                try keyStore.saveSettings(settings, tagKey: vault.settingsKey())
                finding.repaired = "rewritten with the values in use, tagged"
            }
            report.failures.append(finding)
        }
        if onDisk.damaged {
            var finding = CheckReport.Finding(item: "settings", problem: "the settings file does not authenticate")
            if repair {
                try keyStore.saveSettings(settings, tagKey: vault.settingsKey())
                finding.repaired = "rewritten with the values in use"
            }
            report.failures.append(finding)
        }
        if let problem = vault.recoveryProblem {
            // The vault folder is untrusted storage (FORMAT.md §4.2e): recovery data that is
            // missing, put back or foreign is never sealed to; `check` says so, and fails.
            report.failures.append(.init(item: "recovery.n11r", problem: problem))
        }
        // Index entries sealed under keys no longer held (an old index put back) come back from
        // the items' sidecars before anything is judged damaged (FORMAT.md §5.3).
        var rebuilt: [ItemID: CheckReport.Finding] = [:]
        for id in try resealFromSidecars(repair: repair) {
            let finding = CheckReport.Finding(item: id.hex, problem: "its index entry does not open with this vault's keys (an old copy of the index?)",
                                              repaired: repair ? "rebuilt from its sidecar" : nil)
            if repair { rebuilt[id] = finding } else { report.failures.append(finding) }
        }
        for album in try repairAlbumNames(repair: repair) {
            report.failures.append(.init(item: album.id.hex, problem: "the album's name does not open with this vault's keys (an old copy of the index?)",
                                         repaired: repair ? album.how : nil))
        }
        // Files without rows: rebuilt from their sidecars where this PIN's keys open them
        // (FORMAT.md §5.3), before the rows are verified (a rebuilt row is checked as any
        // other); an item another PIN opens is left alone.
        let files = try contentFiles()
        let adoption = try adoptOrphans(files, known: Set(try index.allRows().map(\.id)), write: repair)
        let adopted = Set(adoption.rows.map(\.id))
        for finding in adoption.findings {
            if let id = try? ItemID(hex: finding.item), finding.repaired != nil, adopted.contains(id) {
                rebuilt[id] = finding
            } else {
                report.failures.append(finding)
            }
        }
        let foreign = Set(adoption.foreign.compactMap { try? ItemID(hex: Self.stem(($0 as NSString).lastPathComponent)) })
        let quarantined = try index.quarantinedIDs()
        let rows = try index.allRows()
        let visible = rows.filter(isVisible)
        // Rows adopted by a check that does not write are known too (reported once, above).
        let known = Set(rows.map(\.id)).union(adoption.rows.map(\.id))
        let shared = vault.devices.isShared
        let seals = try index.recoverySeals()
        for (n, row) in visible.enumerated() {
            try progress(n, visible.count)
            report.itemsChecked += 1
            if quarantined.contains(row.id) {
                report.warnings.append(.init(item: row.id.hex, problem: "quarantined earlier"))
                continue
            }
            if let (meta, legacy) = try? ItemMetadata.openReportingLegacy(row, key: metadataKey(row.domain)), legacy {
                var finding = CheckReport.Finding(item: row.id.hex, problem: "its index entry is sealed without its album (an older format)")
                if repair {
                    var resealed = row
                    resealed.meta = try meta.seal(id: row.id, album: row.album, key: metadataKey(row.domain))
                    try index.updateItem(resealed)
                    finding.repaired = "re-sealed with its album"
                }
                report.warnings.append(finding)
            }
            let rebuiltEntry = rebuilt.removeValue(forKey: row.id)
            if let problem = verify(row) {
                var finding = CheckReport.Finding(item: row.id.hex, problem: problem)
                if repair && problem.hasPrefix(Self.thumbnailProblem) {
                    // The item is sound; only its thumbnail goes aside (a new one can be made).
                    finding.repaired = try moveToQuarantine(location.thumbnailPath(row.id)) + " (the thumbnail; make a new one from the item)"
                } else if repair { finding.repaired = try quarantine(row) }
                if let rebuiltEntry { report.failures.append(rebuiltEntry) }
                report.failures.append(finding)
                continue
            }
            // The item is sound: its sidecar and recovery seal (FORMAT.md §5.3).
            let sidecar = try checkSidecar(row, seals: seals, repair: repair)
            if let sidecar { report.failures.append(sidecar) }
            if sidecar?.repaired != nil || sidecar == nil {
                report.ok += 1
                if let rebuiltEntry { report.rebuilt.append(rebuiltEntry) }
            } else if let rebuiltEntry {
                report.failures.append(rebuiltEntry)
            }
        }
        try progress(visible.count, visible.count)
        // Entries rebuilt for rows this session does not list (none expected): reported as they are.
        report.failures += rebuilt.values.sorted { $0.item < $1.item }
        let names = try checkAlbumNameFiles(repair: repair)
        report.failures += names.failures
        report.warnings += names.warnings
        report.warnings += try otherDomainCopies(visible, files: files, repair: repair)
        // Key records without rows, temp files, files of nothing.
        for path in files {
            let name = (path as NSString).lastPathComponent
            if name.hasPrefix(ProtectedFiles.tempPrefix) {
                var finding = CheckReport.Finding(item: path, problem: "leftover temp file (ciphertext of an interrupted write)")
                if repair {
                    try ProtectedFiles.remove(path)
                    finding.repaired = "removed"
                }
                report.warnings.append(finding)
                continue
            }
            let stem = Self.stem(name)
            guard let id = try? ItemID(hex: stem), !foreign.contains(id), !name.hasSuffix(".n11a") else { continue }
            // A sidecar or thumbnail of an item another PIN opens stays with it.
            if (name.hasSuffix(".n11m") || name.hasSuffix(".n11thumb")) && keyStore.hasItemKey(id) && !known.contains(id) {
                if let record = try? keyStore.itemKeyRecord(id), !visibleDomains.contains(record.domain) { continue }
            }
            if !known.contains(id) {
                var finding = CheckReport.Finding(item: id.hex, problem: "file without an index entry (\(path))")
                if shared {
                    // Another device's item whose key file has not arrived, or opens only with
                    // keys this device does not hold: its files are that device's, left as they are.
                    finding.problem += "; the vault is shared, so it is left for the device that added it (it is listed here once a key file that opens arrives)"
                } else if repair { finding.repaired = try moveToQuarantine(path) }
                report.warnings.append(finding)
            }
        }
        for id in try keyStore.itemKeyIDs() where !known.contains(id) {
            let hasFile = files.contains { $0.contains(id.hex) }
            var finding = CheckReport.Finding(item: id.hex, problem: "key record without an item")
            if repair && !hasFile {
                // Never destroyed on a guess: moved aside, restorable by moving it back.
                try keyStore.quarantineItemKey(id)
                finding.repaired = "moved to \(keyStore.quarantinePath)/ (to restore: move it into \(keyStore.root)/items/, which the next command adopts)"
            }
            report.warnings.append(finding)
        }
        for (pack, problem) in try keyStore.damagedPacks() {
            // Not repairable here: the items whose keys it held are reported one by one above;
            // the recovery phrase rebuilds their keys (`recover` into a new key store).
            report.failures.append(.init(item: pack, problem: problem + "; the items whose keys it held do not open (the recovery phrase brings them back)"))
        }
        for (pack, slot) in try keyStore.damagedKeySlots() {
            var finding = CheckReport.Finding(item: pack, problem: "key pack slot \(slot) is neither a key record nor free (a write cut short, or damage)")
            if repair { finding.repaired = "its bytes moved to " + (try keyStore.quarantineDamagedSlot(pack: pack, slot: slot)) }
            report.warnings.append(finding)
        }
        audit(repair ? "check and repair" : "check", count: report.itemsChecked,
              detail: "\(report.failures.count) damaged, \(report.warnings.count) warning(s)")
        return report
    }

    static let thumbnailProblem = "its thumbnail does not open for it: "

    /// nil when the item is sound, else what is wrong with it.
    func verify(_ row: ItemRow) -> String? {
        do {
            _ = try ItemMetadata.open(row, key: metadataKey(row.domain))
        } catch {
            return "its index entry does not authenticate"
        }
        do {
            _ = try keyStore.itemKeyRecord(row.id, domain: row.domain)
        } catch let error as Nu11Error {
            return error.code == .notFound ? "its key record is missing" : error.message
        } catch {
            return Nu11Error.words(error)
        }
        do {
            let (fd, key) = try vault.items.openItem(row)
            defer { close(fd) }
            var sink = NullSink()
            try N11Envelope.open(from: FileDescriptorStream(fd: fd, label: row.id.hex), to: &sink,
                                 expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id), itemKey: key)
            if ProtectedFiles.exists(location.thumbnailPath(row.id)) {
                do { _ = try vault.photos.openThumbnails(row) } catch let error as Nu11Error { return Self.thumbnailProblem + error.message }
            }
            return nil
        } catch let error as Nu11Error {
            return error.message
        } catch {
            return Nu11Error.words(error)
        }
    }

    private func quarantine(_ row: ItemRow) throws -> String {
        var moved: String?
        if let path = try? vault.items.locate(row) { moved = try? moveToQuarantine(path) }
        try index.setQuarantined(row.id)
        return moved.map { "marked quarantined; file \($0)" } ?? "marked quarantined"
    }

    /// A fade change cut short whose `moving` marker was lost (an older program discarded it,
    /// FORMAT.md §4.6) can leave the item's copy in the domain its row is not in: a key record
    /// of that domain beside the row's, and a content file there. Reported; `--repair` moves
    /// them aside (the record to the key store's quarantine/, the file to Quarantine/), never
    /// destroys them. (A marker that is there is settled by every command before this runs.)
    private func otherDomainCopies(_ rows: [ItemRow], files: [String], repair: Bool) throws -> [CheckReport.Finding] {
        let domains = Dictionary(rows.map { ($0.id, $0.domain) }, uniquingKeysWith: { a, _ in a })
        var out: [CheckReport.Finding] = []
        for record in try keyStore.itemKeyRecords() {
            guard let domain = domains[record.itemID], domain != record.domain,
                  keyStore.hasItemKey(record.itemID, domain: domain) else { continue }
            var finding = CheckReport.Finding(item: record.itemID.hex, problem: "a key record of its copy in another domain (a fade change cut short)")
            if repair {
                try keyStore.quarantineItemKey(record.itemID, domain: record.domain)
                finding.repaired = "moved to \(keyStore.quarantinePath)/"
            }
            out.append(finding)
        }
        for path in files where path.hasSuffix(".n11") || path.hasSuffix(".n11note") {
            guard let header = try? N11Header.parse(ProtectedFiles.readPrefix(path, count: N11Header.byteCount)),
                  let domain = domains[header.itemID], domain != header.domain else { continue }
            var finding = CheckReport.Finding(item: header.itemID.hex, problem: "a copy in another domain (\(path); a fade change cut short)")
            if repair { finding.repaired = try moveToQuarantine(path) }
            out.append(finding)
        }
        return out
    }

    private func moveToQuarantine(_ path: String) throws -> String {
        // A shared vault (FORMAT.md § 9.6): a file moved here is gone from every device.
        if vault.devices.isShared { return "left where it is: the vault is shared, and moving the file would take it from every device" }
        try ProtectedFiles.makeDirectory(quarantineFolder)
        let target = quarantineFolder + "/" + (path as NSString).lastPathComponent
        try ProtectedFiles.move(path, to: target)
        return "moved to Quarantine/"
    }

    /// Every regular file of the content folders.
    func contentFiles() throws -> [String] {
        var out: [String] = []
        for folder in [location.photosFolder, location.fadeFolder, location.backupFolder, location.notesFolder,
                       location.thumbnailsFolder, location.metaFolder] {
            out += ((try? ProtectedFiles.list(folder)) ?? []).map { folder + "/" + $0 }
        }
        for album in (try? ProtectedFiles.list(location.albumsFolder)) ?? [] {
            let folder = location.albumsFolder + "/" + album
            out += ((try? ProtectedFiles.list(folder)) ?? []).map { folder + "/" + $0 }
        }
        return out.filter { !ProtectedFiles.isDirectory($0) }
    }
}

/// Discards output (verification only needs authentication).
struct NullSink: ByteSink {
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws {}
}
