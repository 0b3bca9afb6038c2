import Nu11Format

extension KeyStore {
    /// Seals `keys` into slot `index` under `pin`, refusing a PIN that already opens a slot.
    public func sealSlot(_ index: Int, keys: DomainKeys, pin: SecretBytes) throws {
        var record = try readMaster()
        let kek = try record.deriveKEK(pin: pin, deviceKey: deviceKey())
        if let (slot, _) = try? record.open(kek: kek), slot != index {
            throw Nu11Error(.invalidArgument, "that PIN is already in use in this key store", remedy: "choose a different PIN")
        }
        try record.seal(keys, slot: index, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }

    /// Seals `keys` into slot `index` under `pin` unless that PIN already opens another slot;
    /// returns whether it sealed. For callers that must not reveal which (the duress PIN).
    public func sealSlotIfFree(_ index: Int, keys: DomainKeys, pin: SecretBytes) throws -> Bool {
        var record = try readMaster()
        let kek = try record.deriveKEK(pin: pin, deviceKey: deviceKey())
        if let (slot, _) = try? record.open(kek: kek), slot != index { return false }
        try record.seal(keys, slot: index, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
        return true
    }

    /// Replaces a slot with random filler: whatever PIN opened it opens nothing now.
    public func clearSlot(_ index: Int) throws {
        var record = try readMaster()
        record.clear(slot: index)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }

    /// Arms or disarms the Skeleton Switch flag (needs the primary slot's key-encryption
    /// key, as the unlock derived it).
    public func setSkeletonArmed(_ armed: Bool, primary unlocked: UnlockedKeys) throws {
        var record = try readMaster()
        let kek = unlocked.kek
        let (slot, keys) = try record.open(kek: kek)
        guard slot == 0 else {
            throw Nu11Error(.authenticationFailed, "the Skeleton Switch needs the primary PIN", remedy: "use the primary PIN")
        }
        try record.setSkeletonArmed(armed, primary: keys, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }
}
