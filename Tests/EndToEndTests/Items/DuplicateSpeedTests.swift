// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 56: the retry a full disk recommends (`import --skip-duplicates`) decrypted every
/// same-size item for every file (1,000 small files did not finish in 600 s). Each item is now
/// decrypted at most once per command: counted from the system calls (strace), not timed.
@Suite("duplicate detection decrypts each item at most once")
struct DuplicateSpeedTests {
    @Test("40 items and 40 files of one size, half of them duplicates: the right ones are skipped, and no item file is opened twice")
    func eachItemOnce() throws {
        let strace = try #require(PhotoFixtures.tool("strace"), "strace is not installed")
        let cli = try CLI()
        try cli.initVault()
        let first = cli.root + "/first", second = cli.root + "/second"
        for dir in [first, second] { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        func body(_ i: Int) -> Data { Data(String(format: "same-size content %04d", i).utf8) }
        for i in 0..<40 { try body(i).write(to: URL(fileURLWithPath: first + "/f\(i).txt")) }
        #expect(try cli.run(["import", "-r", first], pinStdin: true).code == 0)
        // 20 duplicates (other names, same bytes) and 20 new files, all of the same size.
        for i in 0..<20 { try body(i * 2).write(to: URL(fileURLWithPath: second + "/again\(i).txt")) }
        for i in 40..<60 { try body(i).write(to: URL(fileURLWithPath: second + "/new\(i).txt")) }
        let r = try cli.spawn(strace, ["-f", "-qq", "-e", "trace=open,openat", "-o", cli.root + "/trace",
                                       CLI.binary, "import", "-r", second, "--skip-duplicates", "--pin-stdin"],
                              input: Data((cli.pin + "\n").utf8))
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "skipped").count - 1 == 20, "\(r.stderr)")
        let names = try cli.listJSON(["--all"]).compactMap { $0["name"] as? String }
        #expect(names.count == 60 && names.filter { $0.hasPrefix("again") }.isEmpty, "\(names.count) items")
        // Opens of the vault's item files (reads; the new items' own files are temp files renamed in).
        let trace = try String(contentsOfFile: cli.root + "/trace", encoding: .utf8)
        var opens: [String: Int] = [:]
        for line in trace.split(separator: "\n") where line.contains(cli.vault + "/Vault/") && line.contains(".n11\"") && line.contains("O_RDONLY") {
            guard let start = line.range(of: cli.vault)?.lowerBound, let end = line[start...].firstIndex(of: "\"") else { continue }
            opens[String(line[start..<end]), default: 0] += 1
        }
        #expect(!opens.isEmpty, "no item file was opened: the trace did not see the comparison")
        let twice = opens.filter { $0.value > 1 }
        #expect(twice.isEmpty, "\(twice.count) item files opened more than once, e.g. \(twice.first.map { "\($0.key) × \($0.value)" } ?? "")")
    }

    /// Issue 56: the write path opened each source file twice (the plan opened it to check it,
    /// the import again). Named files, a photo among them, and a folder: each source opened once.
    @Test("import of named files (a photo too) and of a folder opens each source file once")
    func eachSourceOnce() throws {
        let strace = try #require(PhotoFixtures.tool("strace"), "strace is not installed")
        let cli = try CLI()
        try cli.initVault()
        let folder = cli.root + "/folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try PhotoFixtures.run(cli, "convert", ["-size", "64x48", "gradient:red-blue", cli.root + "/photo.jpg"])
        let named = [cli.root + "/photo.jpg", cli.file("note.txt", Array("a text".utf8))]
        for i in 0..<3 { try Data("file \(i)".utf8).write(to: URL(fileURLWithPath: folder + "/f\(i).txt")) }
        let runs: [([String], [String])] = [(["import"] + named, named), (["import", "-r", folder], (0..<3).map { folder + "/f\($0).txt" })]
        for (n, (args, sources)) in runs.enumerated() {
            let trace = cli.root + "/trace-\(n)"
            let r = try cli.spawn(strace, ["-f", "-qq", "-e", "trace=open,openat", "-o", trace, CLI.binary] + args + ["--pin-stdin"],
                                  input: Data((cli.pin + "\n").utf8))
            #expect(r.code == 0, "\(r.stderr)")
            let text = try String(contentsOfFile: trace, encoding: .utf8)
            for source in sources {
                let opens = text.split(separator: "\n").filter { $0.contains("\"\(source)\"") }.count
                #expect(opens == 1, "\(source) opened \(opens) times")
            }
        }
    }
}
