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
    /// vault's fade items), are left alone. Written in batches of 2,048: temp files, one
    /// syncfs, renames, one syncfs — each record is replaced atomically and opens under the
    /// old keys or the new ones at every instant. Returns how many were re-wrapped.
    @discardableResult
    public func rewrapItemKeys(domains: [Domain], from olds: [DomainKeys], to new: DomainKeys,
                               progress: (Int, Int) -> Void = { _, _ in }) throws -> Int {
        let ids = try itemKeyIDs()
        try ProtectedFiles.makeDirectory(itemsPath)
        var batch: [AtomicFileWriter] = []
        defer { for writer in batch { writer.abort() } }
        var rewrapped = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            try syncFileSystem()
            for writer in batch { try writer.publish() }
            try syncFileSystem()
            batch.removeAll()
        }
        for (n, id) in ids.enumerated() {
            if n % 256 == 0 { progress(n, ids.count) }
            // Read directly (a record deleted meanwhile is simply not there to re-wrap).
            guard let bytes = try? ProtectedFiles.read(itemPath(id), limit: 4096), let record = try? ItemKeyRecord.parse(bytes),
                  record.itemID == id, domains.contains(record.domain) else { continue }
            if record.opens(under: new.key(for: record.domain)) { continue }
            for old in olds {
                guard let fresh = record.rewrapped(from: old.key(for: record.domain), to: new.key(for: record.domain)) else { continue }
                batch.append(try stageItemKey(fresh, folderMade: true))
                rewrapped += 1
                break
            }
            if batch.count >= 2048 { try flush() }
        }
        try flush()
        progress(ids.count, ids.count)
        return rewrapped
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
    public func resealSlot(_ index: Int, keys: DomainKeys, kek: SecretBytes) throws {
        var record = try readMaster()
        let (slot, _) = try record.open(kek: kek)
        guard slot == index else {
            throw Nu11Error(.internalError, "the key-encryption key opens slot \(slot), not \(index)")
        }
        try record.seal(keys, slot: index, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }
}
