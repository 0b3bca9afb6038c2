// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import TestSupport
import Testing
@testable import Nu11Vault

/// Issue 57, secondary read paths through the library: the calls the desktop app makes (the
/// gallery's order and summaries, a page, one item's facts, its deadline, preview, random
/// reads, thumbnails, export) against a Fade photo its schedule does not name (the device
/// state put back from before it), each on a vault of its own (the first read destroys it).
/// `FadeReadPathsTests` does the same through the CLI.
@Suite("the app's read paths against an expired Fade item")
struct FadeAPIPathsTests {
    func jpeg(_ t: TestVault, _ name: String) throws -> String {
        let path = t.root + "/" + name
        try #require(Program.run("/usr/bin/convert", ["-size", "64x48", "plasma:fractal", path]) == 0, "ImageMagick")
        return path
    }

    static let paths: [String] = ["datedItemIDs", "itemIDs", "summaries", "list", "list taken", "item", "fadeDeadline",
                                  "preview", "read", "thumbnail grid", "thumbnail preview", "export"]

    @Test("gallery order, summaries, list, item, fadeDeadline, preview, read, thumbnail, export: none shows it")
    func everyPath() throws {
        for path in Self.paths {
            let t = try TestVault()
            let v = try t.vault
            _ = try v.items.importFile(at: try jpeg(t, "kept.jpg"))
            let fading = try v.items.importFile(at: try jpeg(t, "fading.jpg"), fade: 3600)
            v.state.fade.removeAll { $0.id == fading.id }  // the schedule from before it
            let ref = ItemRef(fading.id)
            var shown = false
            switch path {
            case "datedItemIDs": shown = try v.items.datedItemIDs().contains { $0.id == fading.id }
            case "itemIDs": shown = try v.items.itemIDs().contains(fading.id)
            case "summaries": shown = try !v.items.summaries([fading.id]).isEmpty
            case "list": shown = try v.items.list(limit: 100).items.contains { $0.id == fading.id }
            case "list taken": shown = try v.items.list(limit: 100, order: .taken).items.contains { $0.id == fading.id }
            case "item": shown = (try? v.items.item(ref)) != nil
            case "fadeDeadline":
                // Said to be permanent (nil) would be a lie: it throws, or names a deadline passed.
                do { shown = try v.items.fadeDeadline(ref).map { $0 > Date() } ?? true } catch { shown = false }
            case "preview": shown = (try? v.items.preview(ref)) != nil
            case "read": shown = (try? v.items.read(ref, offset: 0, count: 16)) != nil
            case "thumbnail grid": shown = (try? v.photos.thumbnail(ref, size: .grid)) != nil
            case "thumbnail preview": shown = (try? v.photos.thumbnail(ref, size: .preview)) != nil
            case "export":
                var sink = MemorySink()
                shown = (try? v.items.export(ref, to: &sink)) != nil || !sink.bytes.isEmpty
            default: Issue.record("no case for \(path)")
            }
            #expect(!shown, "\(path) shows a Fade item its schedule does not name")
            v.lock()
        }
    }
}
