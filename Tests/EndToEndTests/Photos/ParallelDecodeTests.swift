// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Decoding on every core (issue 36): a folder import runs as many image helpers at once as
/// there are cores (at most 4), each under the helper's lock-down, and its items land in the
/// order given, whatever order the helpers finish in.
@Suite("decoding on every core")
struct ParallelDecodeTests {
    /// What a watcher thread saw of this test's image helpers while the import ran: the most
    /// alive at once, and each one's last /proc status.
    final class HelperWatch: @unchecked Sendable {
        // @unchecked Sendable: every field is read and written under `lock`.
        private let lock = NSLock()
        private var stopped = false
        private var most = 0
        private var last: [Int32: String] = [:]

        var mostAtOnce: Int { lock.withLock { most } }
        var statuses: [Int32: String] { lock.withLock { last } }
        func stop() { lock.withLock { stopped = true } }

        /// Polls /proc every 10 ms for `nu11vlt-image-helper` processes whose parent's
        /// environment names `root` (this test's vault, not another test's).
        func start(root: String) {
            Thread.detachNewThread {
                while !self.lock.withLock({ self.stopped }) {
                    var alive: [Int32: String] = [:]
                    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                        guard let pid = Int32(entry),
                              let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                              comm.hasPrefix("nu11vlt-image"),
                              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                              let ppid = status.split(separator: "\n").first(where: { $0.hasPrefix("PPid:") })
                                .flatMap({ Int32($0.dropFirst(5).trimmingCharacters(in: .whitespaces)) }),
                              let environ = FileManager.default.contents(atPath: "/proc/\(ppid)/environ"),
                              String(decoding: environ, as: UTF8.self).contains(root) else { continue }
                        alive[pid] = status
                    }
                    self.lock.withLock {
                        self.most = max(self.most, alive.count)
                        self.last.merge(alive) { _, new in new }
                    }
                    usleep(10_000)
                }
            }
        }
    }

    @Test("12 photos and a decompression bomb: several locked-down helpers at once, every photo its thumbnail, items in order")
    func helpersInParallel() throws {
        let cli = try CLI()
        try cli.initVault()
        let roll = cli.root + "/roll"
        try FileManager.default.createDirectory(atPath: roll, withIntermediateDirectories: true)
        try PhotoFixtures.run(cli, "/usr/bin/python3", ["-c", """
            from PIL import Image
            for i in range(12):
                Image.effect_noise((2400, 1600), 30 + i).convert("RGB").save('\(roll)/p%02d.jpg' % i, quality=85)
            """])
        FileManager.default.createFile(atPath: roll + "/p05-bomb.png", contents: PhotoFixtures.pngBomb())
        let watch = HelperWatch()
        watch.start(root: cli.root)
        let r = try cli.run(["import", "-r", roll], pinStdin: true)
        watch.stop()
        #expect(r.code == 0, "import: \(r.stderr)")

        let items = try cli.listJSON()
        let names = items.compactMap { $0["name"] as? String }
        let given = (try FileManager.default.contentsOfDirectory(atPath: roll)).sorted()
        #expect(names == given, "the items did not land in the order given: \(names)")
        for item in items where (item["name"] as? String)?.hasSuffix(".jpg") == true {
            #expect(item["thumbnail"] as? Bool == true && item["width"] as? Int == 2400, "\(item)")
        }
        #expect(items.first { $0["name"] as? String == "p05-bomb.png" }?["thumbnail"] as? Bool == false)

        let cores = ProcessInfo.processInfo.activeProcessorCount
        if cores >= 2 {
            #expect(watch.mostAtOnce >= 2, "one helper at a time on \(cores) cores")
        }
        #expect(watch.mostAtOnce <= min(4, max(1, cores)), "more helpers than cores: \(watch.mostAtOnce)")
        #expect(!watch.statuses.isEmpty, "no helper was seen")
        for (pid, status) in watch.statuses {
            // Seen last while it ran: under the seccomp filter, no new privileges.
            #expect(status.contains("Seccomp:\t2") && status.contains("NoNewPrivs:\t1"), "helper \(pid) is not locked down:\n\(status)")
        }
    }
}
