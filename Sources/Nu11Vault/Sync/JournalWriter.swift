// SPDX-License-Identifier: GPL-3.0-or-later
// A device's writer of its own journal (issue 60, stage 1: not yet called by the commands). It
// writes only files named by its own device ID: a new segment appears whole (atomic rename), and
// later entries are appended to it only while it is exactly as long as this writer left it.
import Nu11Format
import Nu11Storage

/// Where a device's chain stands: stage 2 keeps it with the device's key store.
public struct JournalWriterState: Sendable, Hashable {
    public var nextSeq: UInt64
    public var previous: [UInt8]
    public var clock: JournalClock
    /// The segment being appended to and its length as this writer left it (nil: none yet).
    public var segment: (firstSeq: UInt64, length: UInt64)? {
        get { segmentFirstSeq.map { ($0, segmentLength) } }
        set { segmentFirstSeq = newValue?.firstSeq; segmentLength = newValue?.length ?? 0 }
    }
    var segmentFirstSeq: UInt64?
    var segmentLength: UInt64 = 0

    /// A device that has written nothing.
    public static let start = JournalWriterState(nextSeq: 1, previous: [UInt8](repeating: 0, count: 32), clock: .zero)

    public init(nextSeq: UInt64, previous: [UInt8], clock: JournalClock) {
        self.nextSeq = nextSeq; self.previous = previous; self.clock = clock
    }

    /// Continues `device`'s chain from what `ledger` holds (its own entries as merged, whatever
    /// the folder holds now), in a new segment, with a clock after every entry merged.
    public init(resuming device: DeviceID, from ledger: JournalLedger) {
        if let head = ledger.head(of: device) {
            self.init(nextSeq: head.entry.seq + 1, previous: head.hash, clock: ledger.latestClock)
        } else {
            self.init(nextSeq: 1, previous: [UInt8](repeating: 0, count: 32), clock: ledger.latestClock)
        }
    }
}

public struct JournalWriter: Sendable {
    /// A segment grows to about this size, then the next entry starts a new one.
    public static let segmentLimit: UInt64 = 1 << 20

    public let vault: String
    public let device: DeviceID
    public let generation: UInt32
    private let key: SecretBytes
    public private(set) var state: JournalWriterState

    /// `journalKey`: `JournalSegment.key(main:)` of the generation's main key.
    public init(vault: String, device: DeviceID, generation: UInt32, journalKey: SecretBytes, state: JournalWriterState) {
        self.vault = vault; self.device = device; self.generation = generation; self.key = journalKey; self.state = state
    }

    /// Moves the clock past another device's entry (call for what a merge brought in).
    public mutating func observe(_ clock: JournalClock) { state.clock = state.clock.observing(clock) }

    /// Seals `operation` as this device's next entry and makes it durable. `now`: the wall clock in
    /// milliseconds (injected: `Vault.now` in stage 2).
    @discardableResult
    public mutating func append(_ operation: JournalOperation, now: UInt64) throws -> JournalRecord {
        let clock = state.clock.tick(now: now)
        let entry = JournalEntry(device: device, seq: state.nextSeq, previous: state.previous, clock: clock, operation: operation)
        let (bytes, record) = try JournalSegment.seal(entry, generation: generation, key: key)
        let folder = JournalFolder.path(vault: vault)
        var appended = false
        if case let (first, length)? = state.segment, length + UInt64(bytes.count) <= Self.segmentLimit {
            let path = folder + "/" + JournalSegment.fileName(device: device, firstSeq: first)
            // A segment not as this writer left it (cut, or an older copy put back) is not
            // appended to: the entry starts a new segment, and the old one is left to the reader.
            if ProtectedFiles.length(path) == length {
                try ProtectedFiles.append(bytes, to: path, expectedLength: length)
                state.segment = (first, length + UInt64(bytes.count))
                appended = true
            }
        }
        if !appended {
            try ProtectedFiles.makeDirectory(folder)
            let header = JournalSegment.header(device: device, firstSeq: entry.seq, generation: generation)
            let path = folder + "/" + JournalSegment.fileName(device: device, firstSeq: entry.seq)
            guard !ProtectedFiles.exists(path) else {
                throw Nu11Error(.alreadyExists, "the journal segment \(JournalSegment.fileName(device: device, firstSeq: entry.seq)) already exists: this device's chain is behind the folder",
                                remedy: .advice(.untrusted), item: path)
            }
            try ProtectedFiles.writeAtomically(header + bytes, to: path)
            state.segment = (entry.seq, UInt64(header.count + bytes.count))
        }
        state.nextSeq += 1
        state.previous = record.hash
        state.clock = clock
        return record
    }
}
