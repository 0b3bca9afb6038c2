// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// The calls a dry run made (the shim's NU11_FAULT_LOG), to pick the ones worth failing: a
/// command that writes hundreds of key packs is not failed at every call, only where it matters.
struct FaultLog {
    struct Call {
        let n: Int
        let op: String
        /// Relative to the test's folder (a call on a descriptor: the file it refers to).
        let path: String
    }

    let calls: [Call]

    init(text: String, root: String) {
        calls = text.split(separator: "\n").compactMap { line -> Call? in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, let n = Int(parts[0]) else { return nil }
            var path = String(parts[2])
            if path.hasPrefix(root + "/") { path = String(path.dropFirst(root.count + 1)) }
            return Call(n: n, op: String(parts[1]), path: path)
        }.sorted { $0.n < $1.n }
    }

    /// The fsync of a folder right after a rename (or link) into it: the step that makes a
    /// change that already took effect durable. Only folders under `prefix` (relative to the
    /// test's folder).
    func syncsAfterRename(under prefix: String) -> [Int] {
        zip(calls, calls.dropFirst()).compactMap { rename, sync in
            guard rename.op.hasPrefix("rename") || rename.op.hasPrefix("link"), sync.op == "fsync", (rename.path as NSString).deletingLastPathComponent == sync.path,
                  sync.path.hasPrefix(prefix) else { return nil }
            return sync.n
        }
    }

    /// The calls on files under `prefix`.
    func calls(under prefix: String) -> [Int] { calls.filter { $0.path.hasPrefix(prefix) }.map(\.n) }

    /// Every call, except inside the loop over the 256 key packs (`keys/<hh>.n11p`, § 4.3), which
    /// one code path makes or rewrites alike (a key store made by `recover` or `device add` is 514
    /// of its ~700 calls): of those, every call on the first two and the last two packs the command
    /// touches, on the packs of `items` (the ones holding records the test checks), and on every pack
    /// whose sequence of calls differs from the usual one (a pack with records written where the
    /// others are empty, a rename or a removal only some get). A command that touches five packs or
    /// fewer is failed at every call.
    /// A call with the random parts of its file name (temp names, IDs) left out.
    static func shape(_ call: Call) -> String {
        call.op + " " + call.path.replacingOccurrences(of: "[0-9a-f]{8,}", with: "#", options: .regularExpression)
    }

    /// The calls, as shapes, up to `n`.
    func signature(upTo n: Int) -> String { calls.prefix { $0.n <= n }.map(Self.shape).joined(separator: "\n") }

    /// How many of the first calls are the unlock `list` makes on the same vault (`unlock`: its
    /// log) — the gate twice, the wrong-PIN count before and after, the audit log's entry — up
    /// to that entry's folder sync: the same code on the same files, whatever the command.
    func unlockPrologue(_ unlock: FaultLog) -> Int {
        guard let entry = unlock.calls.firstIndex(where: { $0.op.hasPrefix("rename") && $0.path.hasPrefix("keystore/log/") }),
              entry + 1 < unlock.calls.count else { return 0 }
        var n = 0
        for (mine, theirs) in zip(calls, unlock.calls.prefix(entry + 2)) where n == mine.n - 1 {
            guard Self.shape(mine) == Self.shape(theirs) else { break }
            n = mine.n
        }
        return n
    }

    func everyCallButInnerPacks(items: [String] = []) -> [Int] {
        func pack(_ path: String) -> String? {
            let name = (path as NSString).lastPathComponent
            guard (path as NSString).deletingLastPathComponent.hasSuffix("keys"), name.count == 7, name.hasSuffix(".n11p") else { return nil }
            return path
        }
        var order: [String] = [], ops: [String: [String]] = [:]
        for call in calls {
            guard let p = pack(call.path) else { continue }
            if ops[p] == nil { order.append(p) }
            ops[p, default: []].append(call.op)
        }
        guard order.count > 5 else { return calls.map(\.n) }
        var usual: [[String]: Int] = [:]
        for p in order { usual[ops[p] ?? [], default: 0] += 1 }
        let modal = usual.max { $0.value < $1.value }?.key ?? []
        let named = Set(items.map { String($0.prefix(2)).lowercased() + ".n11p" })
        var kept = Set(order.prefix(2) + order.suffix(2))
        for p in order where ops[p] != modal || named.contains((p as NSString).lastPathComponent) { kept.insert(p) }
        return calls.filter { call in pack(call.path).map { kept.contains($0) } ?? true }.map(\.n)
    }
}

/// Issue 56: a change that took effect is reported as done. Each command below renames its
/// change into place and then fsyncs the folder; that fsync failing used to make the command
/// exit 74 although the change was made (a duress PIN armed while the user was told it failed,
/// a rebuilt key store that refused the retry). Failed exactly there, the exit status and the
/// effect agree.
extension FaultTests {
    /// Whether `pin` opens a copy of this vault (asked of a copy: a duress PIN destroys the primary vault).
    static func opensCopy(_ cli: CLI, pin: String) throws -> Bool {
        let copy = cli.root + "/probe-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        for part in ["vault", "keystore"] {
            try FileManager.default.copyItem(atPath: cli.root + "/" + part, toPath: copy + "/" + part)
        }
        return try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data((pin + "\n").utf8),
                             environment: ["NU11VLT_VAULT": copy + "/vault", "NU11VLT_KEYSTORE": copy + "/keystore"]).code == 0
    }

    @Test("pin set-duress failed at the key store's folder fsync after its rename: done means armed, failed means not")
    func setDuressDurability() throws {
        try run("pin set-duress", Scenario(
            prepare: { cli in
                let backup = try cli.run(["pin", "set-backup", "--new-pin-fd", "0"], stdin: Data("backup-pin-9\n".utf8), pinStdin: true)
                #expect(backup.code == 0, "\(backup.stderr)")
                return [try cli.importIDs([cli.file("a.jpg", [5])])[0]: Data([5])]
            },
            command: { _ in [CLI.binary, "pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"] },
            input: { _ in Data("backup-pin-9\nduress-pin-7\n".utf8) },
            verify: { cli, ok in
                let armed = try Self.opensCopy(cli, pin: "duress-pin-7")
                #expect(armed == ok, "pin set-duress said \(ok ? "done" : "failed") but the duress PIN is \(armed ? "armed" : "not armed")")
                return cli.pin
            }), pick: { $0.syncsAfterRename(under: "keystore") })
    }

    @Test("recover failed at the folder fsync after the rebuilt key store's rename: done means it opens, failed means a retry works")
    func recoverDurability() throws {
        // The rebuilt key store's folder is new (fresh-state/keystore), so the fsync of the
        // folder it is renamed into is one of the test's calls.
        let recover = "NU11VLT_KEYSTORE=\"${NU11VLT_VAULT%/vault}/fresh-state/keystore\" exec \"$0\" recover --kdf-memory 19 --kdf-iterations 2 --pin-stdin --phrase-fd 3 3<\"${NU11VLT_VAULT%/vault}/phrase\""
        try run("recover (the rebuilt key store's rename)", Scenario(
            prepare: { cli in
                let id = try cli.importIDs([cli.file("a.jpg", [6, 6])])[0]
                let setup = try cli.run(["recovery", "setup"], pinStdin: true)
                let phrase = try #require(setup.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.range(of: "^[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}$", options: .regularExpression) != nil })
                try Data((phrase + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/phrase"))
                return [id: Data([6, 6])]
            },
            command: { _ in ["/bin/sh", "-c", recover, CLI.binary] },
            input: { _ in Data("recovered-pin-1\n".utf8) },
            verify: { cli, ok in
                let rebuilt = cli.root + "/fresh-state/keystore"
                let env = ["NU11VLT_KEYSTORE": rebuilt]
                if !ok {
                    #expect(!FileManager.default.fileExists(atPath: rebuilt + "/master.n11k"), "recover said failed but left a key store")
                    let again = try cli.spawn("/bin/sh", ["-c", recover, CLI.binary], input: Data("recovered-pin-1\n".utf8))
                    #expect(again.code == 0, "recover after a failed one: \(again.stderr)")
                }
                let opened = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("recovered-pin-1\n".utf8), environment: env)
                #expect(opened.code == 0, "recover said \(ok ? "done" : "failed") but the rebuilt key store does not open: \(opened.stderr)")
                // `recover` is a new key generation for the vault folder (fresh keys; the old key
                // store opens nothing added after): the rebuilt pair is the one checked from here.
                try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/old-keystore")
                try FileManager.default.moveItem(atPath: rebuilt, toPath: cli.keystore)
                return "recovered-pin-1"
            }), pick: { $0.syncsAfterRename(under: "fresh-state") })
    }

    @Test("fido2 enroll failed at the key store's folder fsync after its rename: done means the key opens", .enabled(if: SoftwareFIDO2.available))
    func enrolDurability() throws {
        let key = try SoftwareFIDO2()
        try run("fido2 enroll", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("a.jpg", [5])])[0]: Data([5])] },
            command: { _ in ["/usr/bin/env", "NU11VLT_FIDO2_DEVICE=\(key.device)", CLI.bundled, "fido2", "enroll", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let opens = try cli.runWithKey(["list", "--security-key"], key: key)
                #expect((opens.code == 0) == ok, "fido2 enroll said \(ok ? "done" : "failed") but the key \(opens.code == 0 ? "opens" : "does not open") the vault: \(opens.stderr)")
                return cli.pin
            }), pick: { $0.syncsAfterRename(under: "keystore") })
    }

    @Test("fido2 remove failed at a key store folder fsync after a rename: done means revoked (an old copy of its file opens nothing), failed means it still opens",
          .enabled(if: SoftwareFIDO2.available))
    func removeDurability() throws {
        let key = try SoftwareFIDO2()
        try run("fido2 remove", Scenario(
            prepare: { cli in
                let enrol = try cli.runWithKey(["fido2", "enroll"], key: key, pinStdin: true)
                #expect(enrol.code == 0, "\(enrol.stderr)")
                try FileManager.default.copyItem(atPath: cli.keystore + "/security-keys.n11u", toPath: cli.root + "/old-security-keys.n11u")
                return [try cli.importIDs([cli.file("a.jpg", [5])])[0]: Data([5])]
            },
            command: { _ in ["/usr/bin/env", "NU11VLT_FIDO2_DEVICE=\(key.device)", CLI.bundled, "fido2", "remove", "1", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let opens = try cli.runWithKey(["list", "--security-key"], key: key).code == 0
                #expect(opens != ok, "fido2 remove said \(ok ? "done" : "failed") but the key \(opens ? "opens" : "does not open") the vault")
                if ok {
                    // Revoked for good: the file as it was before the removal opens nothing either.
                    let copy = cli.root + "/probe-keystore"
                    try FileManager.default.copyItem(atPath: cli.keystore, toPath: copy)
                    defer { try? FileManager.default.removeItem(atPath: copy) }
                    try FileManager.default.removeItem(atPath: copy + "/security-keys.n11u")
                    try FileManager.default.copyItem(atPath: cli.root + "/old-security-keys.n11u", toPath: copy + "/security-keys.n11u")
                    let old = try cli.spawn("/bin/sh", ["-c", "exec \"$0\" \"$@\"", CLI.bundled, "list", "--security-key"],
                                            environment: ["NU11VLT_FIDO2_DEVICE": key.device, "NU11VLT_KEYSTORE": copy])
                    #expect(old.code != 0, "fido2 remove said done, but the old copy of security-keys.n11u still opens the vault")
                }
                return cli.pin
            }), pick: { $0.syncsAfterRename(under: "keystore") })
    }
}

/// The unlocks whose calls a scenario of this run fails already (`FaultLog.unlockPrologue`): the
/// first scenario to meet a sequence (and errno) fails each of its calls; the others start after it.
final class UnlockPrologues: @unchecked Sendable {
    static let shared = UnlockPrologues()
    private let lock = NSLock()
    private var claimed = Set<String>()

    /// True for the first caller with `key`.
    func claim(_ key: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return claimed.insert(key).inserted
    }
}
