// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// The duress slot's key-encryption key, kept for the backup vault (`escrow.n11e`, docs/
/// FORMAT.md §4.2c). The duress slot holds a copy of the backup vault's keys; when the backup
/// vault rotates them it re-seals the duress slot itself with this KEK, in the same way a
/// primary rotation re-seals slot 0 — so no forward record has to stay behind for the duress
/// PIN, and `forward/` looks the same after any rotation. Every key store has the file: a
/// decoy of the same size (random bytes) while no duress PIN is set, so it tells nothing.
///
///     0   4   magic "N11E"      4  1  version (1)      5  3  reserved, 0
///     8   60  KeyWrap(duress KEK, under Subkey(backup main, "duress escrow"), ad = "N11E duress escrow v1")
///
/// The backup PIN's holder could set a new duress PIN anyway: holding its KEK gives them nothing more.
extension KeyStore {
    var escrowPath: String { layout.escrow }
    static let escrowMagic: [UInt8] = Array("N11E".utf8) + [1, 0, 0, 0]
    static let escrowAAD = Array("N11E duress escrow v1".utf8)

    static func escrowKey(_ keys: DomainKeys) -> SecretBytes { Subkey.derive(from: keys.main, purpose: "duress escrow") }

    /// Random bytes of the real file's size: no duress PIN (init, a new backup PIN, a
    /// duress PIN that was not free).
    public func writeEscrowDecoy() throws {
        try ProtectedFiles.writeAtomically(Self.escrowMagic + SecureRandom.bytes(32 + KeyWrap.overhead), to: escrowPath)
    }

    /// The duress slot's KEK, wrapped for the backup vault that holds `keys`.
    public func writeEscrow(kek: SecretBytes, for keys: DomainKeys) throws {
        try ProtectedFiles.writeAtomically(Self.escrowMagic + KeyWrap.wrap(kek, under: Self.escrowKey(keys), associatedData: Self.escrowAAD),
                                           to: escrowPath)
    }

    /// Whether the key store has the escrow file at all (real or decoy): key stores made before
    /// it lack it, and their duress slot follows forward records instead.
    public var hasEscrowFile: Bool { POSIX.exists(escrowPath) }

    /// The duress slot's KEK if the file holds one for any of `keys` (nil: a decoy, another
    /// vault's, missing or damaged).
    public func escrowedKEK(for keys: [DomainKeys]) -> (kek: SecretBytes, keys: DomainKeys)? {
        guard let bytes = try? ProtectedFiles.read(escrowPath, limit: 256), bytes.count == 8 + 32 + KeyWrap.overhead,
              Array(bytes[0..<8]) == Self.escrowMagic else { return nil }
        for candidate in keys {
            if let kek = try? KeyWrap.unwrap(bytes[8...], under: Self.escrowKey(candidate), associatedData: Self.escrowAAD) {
                return (kek, candidate)
            }
        }
        return nil
    }

    /// Re-seals the duress slot with `keys` (as the duress role) under its escrowed KEK, unless
    /// it holds them already. Returns whether the slot is current now.
    @discardableResult
    public func resealDuress(with keys: DomainKeys, kek: SecretBytes) throws -> Bool {
        var record = try readMaster()
        guard let (slot, held) = try? record.open(kek: kek), slot == 2 else { return false }
        if held.sameKeys(as: keys) { return true }
        try record.seal(keys.withRole(.duress), slot: 2, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
        return true
    }
}
