// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// Key rotation in the key store: forward records, re-wrapping item key records in
/// durable batches, re-sealing a slot with new keys.
extension KeyStore {
    var forwardFolder: String { layout.forward }

    func forwardPath(_ old: DomainKeys) -> String { POSIX.join(forwardFolder, ForwardRecord.tag(of: old) + ".n11f") }

    /// Writes (durably) the record that leads from `old` to `new`.
    public func writeForward(from old: DomainKeys, to new: DomainKeys) throws {
        try ProtectedFiles.makeDirectory(forwardFolder)
        try ProtectedFiles.writeAtomically(ForwardRecord.seal(new: new, old: old), to: forwardPath(old))
    }

    /// The keys that replaced `old`, if a forward record leads from them.
    public func forward(from old: DomainKeys) throws -> DomainKeys? {
        let path = forwardPath(old)
        guard POSIX.exists(path) else { return nil }
        return try ForwardRecord.open(ProtectedFiles.read(path, limit: 4096), old: old)
    }

    /// Removes the record that leads from `old` (a finished rotation no other slot needs).
    public func removeForward(from old: DomainKeys) throws {
        let path = forwardPath(old)
        if POSIX.exists(path) { try ProtectedFiles.overwriteAndRemove(path) }
    }

    /// Removes every forward record of the chain that leads to `current` (the duress slot
    /// was re-sealed with the current keys, so nothing needs the chain any more). Records of
    /// other chains (another vault's unfinished rotation) are kept.
    /// A record that is not a forward record at all (one whose removal was cut short while it
    /// was being overwritten) is useless to every slot and goes too.
    public func removeForwards(leadingTo current: DomainKeys) throws {
        guard POSIX.exists(forwardFolder) else { return }
        var targets: Set<String> = [ForwardRecord.tag(of: current)]
        var removedSome = true
        while removedSome {
            removedSome = false
            for name in try ProtectedFiles.list(forwardFolder) where name.hasSuffix(".n11f") {
                let path = POSIX.join(forwardFolder, name)
                guard let bytes = try? ProtectedFiles.read(path, limit: 4096) else { continue }
                guard let destination = ForwardRecord.destination(bytes) else {
                    try ProtectedFiles.overwriteAndRemove(path)
                    continue
                }
                guard targets.contains(destination) else { continue }
                try ProtectedFiles.overwriteAndRemove(path)
                targets.insert(String(name.dropLast(5)))
                removedSome = true
            }
        }
    }

    /// Re-wraps, under `new`, every item key record of `domains` that opens under one of
    /// `olds`; records already under `new`, and records that open under none (another
    /// vault's fade items), are left alone. Each pack that changes is written whole as a new
    /// file (free slots dropped), in batches of 64 packs: temp files, one syncfs, renames, one
    /// syncfs — each pack is replaced atomically, so every record opens under the old keys or
    /// the new ones at every instant — then the replaced packs are zeroed in place and synced
    /// (no copy of a record outlives its pack). Returns how many were re-wrapped.
    @discardableResult
    public func rewrapItemKeys(domains: [Domain], from olds: [DomainKeys], to new: DomainKeys,
                               progress: (Int, Int) -> Void = { _, _ in }) throws -> Int {
        try adoptBeforeWriting()  // a loose record left out would not open under the new keys
        let shards = try packShards()
        var batch: [(old: KeyPackFile, writer: AtomicFileWriter)] = []
        defer { for entry in batch { entry.writer.abort() } }
        var rewrapped = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            try syncFileSystem()
            for entry in batch { try entry.writer.publish() }
            try syncFileSystem()
            for entry in batch { try entry.old.shred() }
            try syncFileSystem()
            for entry in batch { entry.old.release() }
            batch.removeAll()
        }
        // Packs are read and their new bytes made on every core, 64 at a time (a batch); then,
        // in order, each that changes is opened again for writing, exclusively, and its new
        // bytes made again if it changed in between (most packs have nothing to change).
        for start in stride(from: 0, to: shards.count, by: 64) {
            let paths = shards[start..<min(start + 64, shards.count)].map { packPath($0) }
            // A pack holds hundreds of records: worth a thread each from two packs on.
            let firsts = try ParallelRows.map(paths, serialBelow: 2) { path -> (bytes: [UInt8], count: Int, seen: [UInt8])? in
                guard let reader = try KeyPackFile(path, exclusive: false) else { return nil }
                defer { reader.release() }
                guard let made = try Self.rewritten(reader, domains: domains, from: olds, to: new) else { return nil }
                return (made.bytes, made.count, reader.bytes)
            }
            for (n, path) in paths.enumerated() {
                progress(start + n, shards.count)
                guard let first = firsts[n], let pack = try KeyPackFile(path, exclusive: true) else { continue }
                guard let (out, count) = pack.bytes == first.seen ? (first.bytes, first.count)
                    : try Self.rewritten(pack, domains: domains, from: olds, to: new) else {
                    pack.release()
                    continue
                }
                rewrapped += count
                let writer = try AtomicFileWriter(destination: pack.path)
                batch.append((pack, writer))
                var sink = writer.sink
                try sink.write(out)
                try writer.prepare(.batched)
                if batch.count >= 64 { try flush() }
            }
        }
        try flush()
        progress(shards.count, shards.count)
        return rewrapped
    }

    /// A pack's new bytes with every record of `domains` that does not open under `new`
    /// re-wrapped from one of `olds`, or nil when no record in it changes.
    static func rewritten(_ pack: KeyPackFile, domains: [Domain], from olds: [DomainKeys],
                          to new: DomainKeys) throws -> (bytes: [UInt8], count: Int)? {
        var out = KeyPack.header
        var count = 0
        for (index, slot) in try pack.slots().enumerated() {
            switch slot {
            case .free:
                continue
            case .damaged:
                // Kept as it is for `check` to report (padded to a whole slot).
                let raw = pack.raw(index)
                out += raw + [UInt8](repeating: 0xff, count: KeyPack.slotCount - raw.count)
            case .record(let record):
                var fresh: ItemKeyRecord?
                if domains.contains(record.domain) && !record.opens(under: new.key(for: record.domain)) {
                    fresh = olds.lazy.compactMap { record.rewrapped(from: $0.key(for: record.domain), to: new.key(for: record.domain)) }.first
                }
                out += (fresh ?? record).encoded()
                count += fresh == nil ? 0 : 1
            }
        }
        return count == 0 ? nil : (out, count)
    }

    // MARK: content rotation marker

    func contentMarkerPath(_ tag: String) -> String { POSIX.join(forwardFolder, tag + ".content") }

    /// The insertion sequence up to which `rekey --content` is re-encrypting items (items
    /// re-encrypted get a later one), if one was started and has not finished.
    public func contentRotation(_ tag: String) throws -> Int64? {
        let path = contentMarkerPath(tag)
        guard POSIX.exists(path) else { return nil }
        let bytes = try ProtectedFiles.read(path, limit: 64)
        return Int64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    public func setContentRotation(_ tag: String, through seq: Int64?) throws {
        guard let seq else {
            try ProtectedFiles.remove(contentMarkerPath(tag))
            return
        }
        try ProtectedFiles.makeDirectory(forwardFolder)
        try ProtectedFiles.writeAtomically(Array("\(seq)\n".utf8), to: contentMarkerPath(tag))
    }

    /// Seals `keys` into slot `index` under the slot's own key-encryption key (no PIN
    /// stretched): the commit point of a rotation.
    public func resealSlot(_ index: Int, keys: DomainKeys, kek: SecretBytes, tpmRecovery: [UInt8]? = nil) throws {
        var record = try readMaster()
        let (slot, _) = try record.open(kek: kek)
        guard slot == index else {
            throw Nu11Error(.internalError, "the key-encryption key opens slot \(slot), not \(index)")
        }
        try record.seal(keys, slot: index, kek: kek)
        // The TPM recovery wrap of slot 0's TPM secret, re-made for a new recovery key, in the same write.
        if let tpmRecovery, var tpm = record.tpm {
            tpm.recovery = tpmRecovery
            record.tpm = tpm
        }
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }
}
