// SPDX-License-Identifier: GPL-3.0-or-later
// Reading every device's journal from `<vault>/Journal/` (issue 60, stage 1: not yet used by the
// commands). A segment that has arrived only in part, or not yet, never makes the read fail:
// what authenticates is kept, the rest is a finding.
import Nu11Format
import Nu11Storage

/// Something the reader (or the ledger) noticed; none of these stops a listing.
public enum JournalFinding: Sendable, Hashable {
    /// A segment stopped early; the entries before the stop are kept.
    case defect(file: String, JournalDefect)
    /// A segment that could not be read at all (the file system's error).
    case unreadable(file: String)
    /// Sequence numbers of a device that no segment holds (not arrived yet, or lost).
    case gap(device: DeviceID, missing: ClosedRange<UInt64>)
    /// A file in the journal folder that is no segment (a sync tool's conflict copy, a stray file).
    case strayFile(String)
    /// A device's journal reads shorter than what was merged before: an older copy put back. The
    /// entries merged before are kept.
    case rolledBack(device: DeviceID, known: UInt64, found: UInt64)
    /// A different entry where one was already known (or one that does not chain to its
    /// neighbours): the one known first is kept.
    case forked(JournalPosition)
}

/// What one reading of the journal folder found.
public struct JournalScan: Sendable {
    public var records: [JournalRecord] = []
    public var findings: [JournalFinding] = []
    /// The highest sequence number read per device.
    public var heads: [DeviceID: UInt64] = [:]
    public init() {}
}

public enum JournalFolder {
    public static let folderName = "Journal"
    /// The largest segment read (a writer starts a new one at `JournalWriter.segmentLimit`).
    public static let readLimit = 64 << 20

    public static func path(vault: String) -> String { vault + "/" + folderName }

    /// Reads every segment in `<vault>/Journal/`. `key(generation)` gives the journal key of a key
    /// generation (`JournalSegment.key(main:)`), nil for one not held.
    public static func scan(vault: String, key: (UInt32) -> SecretBytes?) -> JournalScan {
        var scan = JournalScan()
        let folder = path(vault: vault)
        guard ProtectedFiles.isDirectory(folder), let names = try? ProtectedFiles.list(folder) else { return scan }
        var segments: [DeviceID: [(firstSeq: UInt64, name: String)]] = [:]
        for name in names.sorted() {
            if let parsed = JournalSegment.parseFileName(name) {
                segments[parsed.device, default: []].append((parsed.firstSeq, name))
            } else if !name.hasPrefix(ProtectedFiles.tempPrefix) {
                scan.findings.append(.strayFile(name))
            }
        }
        for device in segments.keys.sorted() {
            guard let files = segments[device]?.sorted(by: { $0.firstSeq < $1.firstSeq }) else { continue }
            var held: [UInt64: JournalRecord] = [:]
            for file in files {
                let bytes: [UInt8]
                do { bytes = try ProtectedFiles.read(folder + "/" + file.name, limit: readLimit) } catch {
                    scan.findings.append(.unreadable(file: file.name)); continue
                }
                let contents = JournalSegment.read(bytes, device: device, firstSeq: file.firstSeq, key: key)
                if let stop = contents.stop { scan.findings.append(.defect(file: file.name, stop)) }
                for record in contents.records {
                    let seq = record.entry.seq
                    if let known = held[seq] {
                        // Two segments overlap (a segment written anew): the same entry is fine.
                        if known.hash != record.hash { scan.findings.append(.forked(JournalPosition(device: device, seq: seq))) }
                        continue
                    }
                    if let before = held[seq - 1], before.hash != record.entry.previous {
                        scan.findings.append(.defect(file: file.name, .brokenChain(seq: seq)))
                        break
                    }
                    held[seq] = record
                }
            }
            let seqs = held.keys.sorted()
            var expected: UInt64 = 1
            for seq in seqs {
                if seq > expected { scan.findings.append(.gap(device: device, missing: expected...(seq - 1))) }
                expected = seq + 1
            }
            if let last = seqs.last { scan.heads[device] = last }
            scan.records += seqs.compactMap { held[$0] }
        }
        return scan
    }
}

/// Every entry merged so far, per device and sequence number, and the highest sequence number seen
/// per device: what a reading of the folder is checked against, so that an older copy of a segment
/// (a sync peer's, a backup's) adds nothing and takes nothing away. Stage 2 keeps it in the index.
public struct JournalLedger: Sendable {
    public private(set) var records: [JournalPosition: JournalRecord] = [:]
    public private(set) var heads: [DeviceID: UInt64] = [:]

    public init() {}

    /// Adds what `scan` read; returns what did not fit (a rolled-back device, a fork).
    @discardableResult
    public mutating func ingest(_ scan: JournalScan) -> [JournalFinding] {
        var findings: [JournalFinding] = []
        for (device, known) in heads.sorted(by: { $0.key < $1.key }) {
            let found = scan.heads[device] ?? 0
            if found < known { findings.append(.rolledBack(device: device, known: known, found: found)) }
        }
        for record in scan.records {
            let position = JournalPosition(device: record.entry.device, seq: record.entry.seq)
            if let known = records[position] {
                if known.hash != record.hash { findings.append(.forked(position)) }
                continue
            }
            let before = records[JournalPosition(device: position.device, seq: position.seq - 1)]
            let after = records[JournalPosition(device: position.device, seq: position.seq + 1)]
            if let before, before.hash != record.entry.previous { findings.append(.forked(position)); continue }
            if let after, after.entry.previous != record.hash { findings.append(.forked(position)); continue }
            records[position] = record
            heads[position.device] = max(heads[position.device] ?? 0, position.seq)
        }
        return findings
    }

    /// The merged index state of every entry held.
    public var merged: MergedState { JournalMerge.merge(records.values) }

    /// The latest clock reading among the entries held: a writer observes it before appending.
    public var latestClock: JournalClock { records.values.map(\.entry.clock).max() ?? .zero }

    /// The record a device's chain continues from (nil: the device has written nothing).
    public func head(of device: DeviceID) -> JournalRecord? {
        heads[device].flatMap { records[JournalPosition(device: device, seq: $0)] }
    }
}
