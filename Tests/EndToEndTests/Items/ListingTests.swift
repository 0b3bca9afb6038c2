// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 17, listing: one JSON document, --all / --limit 0, local time, no trailing spaces.
@Suite("listing conventions")
struct ListingTests {
    @Test("--json is one document with items and next (null on the last page); --all and --limit 0 list everything")
    func document() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs((0..<5).map { cli.file("f\($0).bin", [UInt8($0)]) })
        let first = try cli.run(["list", "--json", "--limit", "2"], pinStdin: true)
        #expect(first.code == 0 && first.stderr.isEmpty, "JSON mode prints the cursor in the document, not on stderr: \(first.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: first.stdout) as? [String: Any])
        #expect((doc["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == Array(ids.prefix(2)))
        #expect(doc["next"] as? String == ids[1])
        let last = try #require(try JSONSerialization.jsonObject(with: try cli.run(["list", "--json", "--after", ids[3]], pinStdin: true).stdout) as? [String: Any])
        #expect((last["items"] as? [[String: Any]])?.count == 1 && last["next"] is NSNull, "the last page: \(last)")
        for args in [["--all"], ["--limit", "0"]] {
            let r = try cli.run(["list", "--json"] + args, pinStdin: true)
            let all = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
            #expect((all["items"] as? [[String: Any]])?.count == 5 && all["next"] is NSNull, "\(args): \(r.out)")
        }
        // Every item has every key (null when absent): one schema.
        let keys = Set(((doc["items"] as? [[String: Any]]) ?? []).flatMap { $0.keys })
        for key in ["id", "name", "size", "type", "album", "albumID", "created", "fadesAt", "modified", "width", "height",
                    "taken", "camera", "gps", "thumbnail", "kind", "domain"] {
            #expect(keys.contains(key), "list --json lacks \(key)")
        }
        expectCleanError(try cli.run(["list", "--limit", "-1"], pinStdin: true), code: 64)
    }

    @Test("human output: local time to the minute, no trailing spaces, the cursor on stderr")
    func human() throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs((0..<3).map { cli.file("n\($0).txt", [1]) })
        let r = try cli.run(["list", "--limit", "2"], pinStdin: true, environment: ["TZ": "Asia/Kolkata"])
        #expect(r.code == 0)
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 2 && lines.allSatisfy { !$0.hasSuffix(" ") }, "trailing spaces: \(lines)")
        let json = try cli.listJSON()
        let stamp = try #require(json.first?["created"] as? String)
        let created = try #require(ISO8601DateFormatter().date(from: stamp))
        let local = DateFormatter()
        local.timeZone = TimeZone(identifier: "Asia/Kolkata")
        local.dateFormat = "yyyy-MM-dd HH:mm"
        #expect(lines.first?.contains(local.string(from: created)) == true, "not local time (UTC+5:30): \(lines)")
        #expect(r.stderr.contains("--after"))
    }
}
