// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The domain keys one PIN opens.
public struct DomainKeys: Sendable {
    /// The slot's role: which vault this PIN opens.
    public enum Role: UInt8, Sendable { case primary = 1, backup = 2, duress = 3 }

    public let role: Role
    /// Vault key for the primary role, Backup key for the backup and duress roles.
    public let main: SecretBytes
    public let fade: SecretBytes
    public let archive: SecretBytes
    /// When the main and fade keys were made (seconds since 1970; 0 for keys sealed before
    /// this was recorded). `keys.rotate_days` rotates keys older than its period.
    public let created: UInt64
    /// The key generation (docs/FORMAT.md §4.2e): 1 for the first keys, one more at every
    /// rotation — and every revocation of a credential is a rotation. 0: sealed before
    /// generations were counted.
    public let generation: UInt32
    /// Which recovery data the vault folder must hold for these keys: the commitment to the
    /// recovery phrase's public key (16 bytes), or nil when none was recorded (keys sealed
    /// before it, or a vault with no phrase). A `recovery.n11r` that is missing or whose key
    /// does not match is reported and never sealed to.
    public let recoveryCommitment: [UInt8]?

    public init(role: Role, main: SecretBytes, fade: SecretBytes, archive: SecretBytes, created: UInt64 = 0,
                generation: UInt32 = 0, recoveryCommitment: [UInt8]? = nil) {
        self.role = role
        self.main = main
        self.fade = fade
        self.archive = archive
        self.created = created
        self.generation = generation
        self.recoveryCommitment = recoveryCommitment?.count == 16 ? recoveryCommitment : nil
    }

    /// Fresh random keys.
    public static func generate(role: Role, created: UInt64 = 0) -> DomainKeys {
        DomainKeys(role: role, main: SecretBytes(randomCount: 32), fade: SecretBytes(randomCount: 32),
                   archive: SecretBytes(randomCount: 32), created: created, generation: 1)
    }

    /// The successor of these keys for a rotation: new main, fade and archive keys (and so
    /// new metadata subkeys, a new audit log key and a new settings tag key), the same role.
    /// The archive key it replaces is kept wrapped under the new one (the key store's
    /// `archive-keys/`), so secure archives made before still import.
    public func rotated(created: UInt64) -> DomainKeys {
        let archive = SecretBytes(randomCount: 32)  // rotates too (issue 29)
        return DomainKeys(role: role, main: SecretBytes(randomCount: 32), fade: SecretBytes(randomCount: 32),
                          archive: archive, created: created, generation: generation &+ 1,
                          recoveryCommitment: recoveryCommitment)
    }

    /// These keys with some parts replaced (the one place that copies every field).
    private func replacing(role: Role? = nil, fade: SecretBytes? = nil, recovery: [UInt8]?? = .none) -> DomainKeys {
        DomainKeys(role: role ?? self.role, main: main, fade: fade ?? self.fade, archive: archive, created: created,
                   generation: generation, recoveryCommitment: recovery ?? recoveryCommitment)
    }

    /// The same keys under another role (the duress slot holds the backup vault's keys).
    public func withRole(_ role: Role) -> DomainKeys { replacing(role: role) }

    /// The same keys bound to other recovery data (nil: none).
    public func withRecovery(_ commitment: [UInt8]?) -> DomainKeys { replacing(recovery: .some(commitment)) }

    /// What the recovery data carries (FORMAT.md §5.2, version 2): these keys without the Fade
    /// key (zeros), since Fade items are not meant to come back; the archive key stays, so
    /// secure archives made by this vault still import after a recovery.
    public func forRecovery() -> DomainKeys {
        replacing(role: .primary, fade: SecretBytes.filling(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 0) })
    }

    /// Whether the Fade key is all zeros (keys that came from version 2 recovery data).
    public var lacksFadeKey: Bool { fade.withUnsafeBytes { $0.allSatisfy { $0 == 0 } } }

    /// The same keys with a fresh Fade key (after a recovery, which does not bring it back).
    public func withFreshFade() -> DomainKeys { replacing(fade: SecretBytes(randomCount: 32)) }

    /// Whether both hold the same main key (constant time).
    public func sameKeys(as other: DomainKeys) -> Bool { main.constantTimeEquals(other.main) }

    public func key(for domain: Domain) -> SecretBytes {
        switch domain {
        case .vault, .backup: main
        case .fade: fade
        case .archive: archive
        }
    }

    /// The domain the main key serves.
    public var mainDomain: Domain { role == .primary ? .vault : .backup }

    static let payloadByteCount = 128

    func payload() -> SecretBytes {
        SecretBytes.filling(count: Self.payloadByteCount) { out in
            out[0] = role.rawValue
            for (i, key) in [main, fade, archive].enumerated() {
                key.withUnsafeBytes { src in
                    UnsafeMutableRawBufferPointer(rebasing: out[(1 + 32 * i)..<(33 + 32 * i)]).copyMemory(from: src)
                }
            }
            for i in 0..<8 { out[97 + i] = UInt8(truncatingIfNeeded: created >> (56 - 8 * i)) }
            if let recoveryCommitment {
                out[105] = 1
                for i in 0..<16 { out[106 + i] = recoveryCommitment[i] }
            }
            for i in 0..<4 { out[122 + i] = UInt8(truncatingIfNeeded: generation >> (24 - 8 * i)) }
        }
    }

    static func fromPayload(_ payload: SecretBytes) throws -> DomainKeys {
        try payload.withUnsafeBytes { b in
            guard b.count == payloadByteCount, let role = Role(rawValue: b[0]) else { throw Nu11Error.wrongPIN }
            func key(_ i: Int) -> SecretBytes {
                SecretBytes(copying: UnsafeRawBufferPointer(rebasing: b[(1 + 32 * i)..<(33 + 32 * i)]))
            }
            let created = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(b[97 + $1]) }
            let commitment = b[105] == 1 ? Array(b[106..<122]) : nil
            let generation = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(b[122 + $1]) }
            return DomainKeys(role: role, main: key(0), fade: key(1), archive: key(2), created: created,
                              generation: generation, recoveryCommitment: commitment)
        }
    }
}
