// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 29: the Skeleton Switch cannot be pre-empted. The attacker holds the laptop (its TPM
/// and a copy of the key store) and uses tpm2-tools and a client of their own, never nu11vlt:
/// before the deadline, without the PIN, the Skeleton secret does not unseal; with the PIN
/// (a positive control) it does, and a check-in replaces it; after the TPM's clock passes the
/// deadline, even the PIN unseals nothing.
@Suite("Skeleton Switch against tpm2-tools", .enabled(if: SoftwareTPM.available))
struct TPMSkeletonAttackTests {
    /// What the client reads from master.n11k (docs/FORMAT.md §4.3): the deadline and the
    /// Skeleton object's TPM reset limit (nil: none).
    struct Sealed: Equatable {
        var deadline: UInt64
        var resetLimit: UInt32?
    }

    /// Writes object `index` of the TPM record (0–2 the PIN entries, 3 the device state, 4 the
    /// Skeleton) as pub.bin/priv.bin, and the primary key's name as name-record.bin.
    @discardableResult
    static func object(_ keystore: String, index: Int, into dir: String) throws -> Sealed {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: keystore + "/master.n11k")))
        let t = Array(b[500...])
        #expect(Array(t[0..<4]) == Array("N11T".utf8))
        let mask = t[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var offset = 124 + 32 * mask.nonzeroBitCount
        var objects: [[UInt8]] = []
        for _ in 0..<5 {
            let length = Int(t[offset]) << 8 | Int(t[offset + 1])
            objects.append(Array(t[(offset + 2)..<(offset + 2 + length)]))
            offset += 2 + length
        }
        let chosen = objects[index]
        let publicSize = Int(chosen[0]) << 8 | Int(chosen[1])
        try Data(chosen[0..<(2 + publicSize)]).write(to: URL(fileURLWithPath: dir + "/pub.bin"))
        try Data(chosen[(2 + publicSize)...]).write(to: URL(fileURLWithPath: dir + "/priv.bin"))
        try Data(t[16..<50]).write(to: URL(fileURLWithPath: dir + "/name-record.bin"))
        var limit: UInt32?
        if t[4] == 2 {
            let value = t[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            limit = value == UInt32.max ? nil : value
        }
        return Sealed(deadline: t[50..<58].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, resetLimit: limit)
    }

    static func skeletonObject(_ keystore: String, into dir: String) throws -> Sealed {
        try object(keystore, index: 4, into: dir)
    }

    /// The PIN's TPM auth value, computed from the key store as any client can (Argon2id with
    /// the record's salt and cost, then HKDF-Expand "nu11vlt subkey v1 tpm auth").
    static func authValue(_ cli: CLI, pin: String) throws -> String {
        let script = """
            import sys, unicodedata
            from argon2.low_level import Type, hash_secret_raw
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
            b = open(sys.argv[1], 'rb').read()
            t, m = int.from_bytes(b[8:12], 'big'), int.from_bytes(b[12:16], 'big')
            pin = unicodedata.normalize('NFC', sys.stdin.readline().rstrip('\\n')).encode()
            s = hash_secret_raw(pin, b[16:32], time_cost=t, memory_cost=m, parallelism=1, hash_len=32, type=Type.ID)
            print(HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b'nu11vlt subkey v1 tpm auth').derive(s).hex())
            """
        let r = try cli.spawn("/usr/bin/python3", ["-c", script, cli.keystore + "/master.n11k"], input: Data((pin + "\n").utf8))
        #expect(r.code == 0, "\(r.stderr)")
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The attacker's client on the Skeleton object: its policy is clock < deadline, resetCount
    /// <= limit, the auth value.
    static func unseal(_ cli: CLI, _ tpm: SoftwareTPM, deadline sealed: Sealed, auth: String?) throws -> (secret: String?, why: String) {
        var policy = ["tpm2_policycountertimer -Q -S s.ctx --ult clock=\(sealed.deadline)"]
        if let limit = sealed.resetLimit { policy.append("tpm2_policycountertimer -Q -S s.ctx --ule resets=\(limit)") }
        return try unseal(cli, tpm, policy: policy, auth: auth)
    }

    /// The attacker's client: loads pub.bin/priv.bin under the standard primary key and tries
    /// to unseal it through a policy session (`policy`, then the auth value). Returns the
    /// secret or nil, and tpm2-tools' messages.
    static func unseal(_ cli: CLI, _ tpm: SoftwareTPM, policy: [String], auth: String?) throws -> (secret: String?, why: String) {
        let dir = cli.root
        let password = auth.map { "session:s.ctx+hex:\($0)" } ?? "session:s.ctx"
        let script = """
            set -e
            cd "\(dir)"
            rm -f primary.ctx obj.ctx s.ctx
            tpm2_flushcontext -t || true; tpm2_flushcontext -s || true
            tpm2_createprimary -Q -C o -g sha256 -G ecc256:null:aes128cfb \
              -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|decrypt|noda' -c primary.ctx
            tpm2_readpublic -Q -c primary.ctx -n name.bin
            cmp name.bin name-record.bin
            tpm2_flushcontext -t || true
            tpm2_createprimary -Q -C o -g sha256 -G ecc256:null:aes128cfb \
              -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|decrypt|noda' -c primary.ctx
            tpm2_load -Q -C primary.ctx -u pub.bin -r priv.bin -c obj.ctx
            tpm2_flushcontext -t || true
            echo loaded >&2
            tpm2_startauthsession --policy-session -S s.ctx
            \(policy.joined(separator: "\n"))
            tpm2_policyauthvalue -Q -S s.ctx
            tpm2_unseal -c obj.ctx -p '\(password)' -o secret.bin
            od -An -tx1 secret.bin | tr -d ' \\n'
            """
        let r = try cli.spawn("/bin/sh", ["-c", script], environment: ["TPM2TOOLS_TCTI": tpm.tcti])
        #expect(!r.stderr.contains("cmp:") && !r.stderr.contains("differ"), "the client's primary key is not the key store's: \(r.stderr)")
        #expect(r.stderr.contains("loaded"), "the client did not get as far as the unseal: \(r.stderr)")
        return (r.code == 0 ? r.out.trimmingCharacters(in: .whitespacesAndNewlines) : nil, r.stderr)
    }

    @Test("before the deadline nothing unseals without the PIN; a check-in replaces the secret; after tpm2_setclock past the deadline the PIN unseals nothing")
    func preemption() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let cli = try CLI(pin: "482913")
        try tpm.lockout(maxTries: 50, recoverySeconds: 1)
        _ = try cli.initTPMVault(tpm)
        let id = try cli.importIDs([cli.file("secret.bin", [9, 8, 7])])[0]
        #expect(try cli.run(["skeleton", "enable", "--interval", "2h"], pinStdin: true).code == 0)

        let deadline = try Self.skeletonObject(cli.keystore, into: cli.root)
        #expect(deadline.deadline > 0 && deadline.resetLimit != nil)
        // Without the PIN: refused (it was sealed with an empty password before).
        let noPIN = try Self.unseal(cli, tpm, deadline: deadline, auth: nil)
        #expect(noPIN.secret == nil, "the Skeleton secret unsealed without the PIN")
        #expect(noPIN.why.contains("authorization HMAC check failed"), "refused for another reason: \(noPIN.why)")
        // With the PIN, before the deadline: the client works (the positive control).
        let auth = try Self.authValue(cli, pin: cli.pin)
        let control = try Self.unseal(cli, tpm, deadline: deadline, auth: auth)
        let saved = try #require(control.secret, "the client cannot unseal even with the PIN: \(control.why)")
        // A check-in (any primary unlock) seals a fresh secret: what was saved is stale.
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        let next = try Self.skeletonObject(cli.keystore, into: cli.root)
        let fresh = try #require(try Self.unseal(cli, tpm, deadline: next, auth: auth).secret)
        #expect(fresh != saved, "a check-in kept the same Skeleton secret")

        // The deadline passes on the TPM's clock: even the PIN unseals nothing, and nu11vlt opens nothing.
        try tpm.advance(seconds: 3 * 3600)
        let late = try Self.unseal(cli, tpm, deadline: next, auth: auth)
        #expect(late.secret == nil, "the Skeleton secret unsealed after its deadline")
        #expect(late.why.contains("policy") || late.why.contains("0x99d") || late.why.contains("0x99D"), "refused for another reason: \(late.why)")
        let after = try cli.run(["export", id, "-o", "-"], pinStdin: true)
        #expect(after.code != 0 && after.stdout.isEmpty)
    }
}
