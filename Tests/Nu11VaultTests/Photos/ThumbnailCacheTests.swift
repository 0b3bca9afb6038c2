// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import TestSupport
import Testing
@testable import Nu11Vault

/// The seed's thumbnail LRU: decrypted thumbnails in memory, byte-bounded, consulted only
/// after the read-time checks, gone on delete, fade expiry and lock.
@Suite("thumbnail cache")
struct ThumbnailCacheTests {
    /// A real JPEG, made by ImageMagick for the test.
    func jpeg(_ t: TestVault, _ name: String) throws -> String {
        let path = t.root + "/" + name
        let status = Program.run("/usr/bin/convert", ["-size", "640x480", "plasma:fractal", "-quality", "80", path])
        try #require(status == 0, "ImageMagick could not make \(name)")
        return path
    }

    @Test("a thumbnail is served from memory once read; delete, fade expiry and lock drop it")
    func cache() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        let vault = try LockedVault(t.location, clock: clock).unlock(pin: secret("test-pin"))
        let kept = try vault.items.importFile(at: try jpeg(t, "k.jpg"))
        let fading = try vault.items.importFile(at: try jpeg(t, "f.jpg"), fade: 60)
        #expect(kept.thumbnail && kept.width == 640 && kept.height == 480)
        let tile = try vault.photos.thumbnail(kept.ref, size: .grid)
        #expect(tile.width == 256 && tile.height == 192 && tile.encoding == .jpeg)
        _ = try vault.photos.thumbnail(fading.ref, size: .preview)
        #expect(vault.previewCache.count == 2)
        // Served from memory: the sealed file is no longer needed for a second read.
        try FileManager.default.removeItem(atPath: t.location.thumbnailPath(kept.id))
        #expect(try vault.photos.thumbnail(kept.ref, size: .grid) == tile)
        #expect(throws: Nu11Error.self) { _ = try vault.photos.thumbnail(kept.ref, size: .preview) }
        // Fade expiry: refused first, and the cached bytes are dropped.
        clock.pass(61)
        #expect { _ = try vault.photos.thumbnail(fading.ref, size: .preview) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect(vault.previewCache.get(CachedPart(id: fading.id, part: .preview)) == nil)
        try vault.items.delete([kept.ref])
        #expect(vault.previewCache.count == 0, "a deleted item's thumbnail stayed cached")
        let again = try vault.items.importFile(at: try jpeg(t, "a.jpg"))
        _ = try vault.photos.thumbnail(again.ref, size: .grid)
        #expect(vault.previewCache.count == 1)
        vault.lock()
        #expect(vault.previewCache.count == 0)
    }

    @Test("a tile's thumbnail reads both sizes in one pass: the grid size when it covers the tile, else the preview, both then in memory")
    func tileOnePass() throws {
        let t = try TestVault()
        let vault = try t.vault
        let item = try vault.items.importFile(at: try jpeg(t, "s.jpg"))
        // Scale 1 (a 160 px tile): the grid size covers it, and the preview is not decrypted for it.
        let small = try vault.photos.tileThumbnail(item.ref, need: 160)
        #expect(small.width == 256 && small.height == 192)
        #expect(vault.previewCache.get(CachedPart(id: item.id, part: .preview)) == nil)
        // Scale 2 (320 device pixels): the preview, and from the same read the grid size, so the
        // sealed file is not needed again for either.
        // The two sizes one after the other (how a tile read them before): two decryptions.
        vault.previewCache.removeAll()
        var opened = vault.thumbnailFilesOpened
        _ = try vault.photos.thumbnail(item.ref, size: .grid)
        _ = try vault.photos.thumbnail(item.ref, size: .preview)
        #expect(vault.thumbnailFilesOpened == opened + 2)
        vault.previewCache.removeAll()
        opened = vault.thumbnailFilesOpened
        let large = try vault.photos.tileThumbnail(item.ref, need: 320)
        #expect(vault.thumbnailFilesOpened == opened + 1, "a tile's two sizes took \(vault.thumbnailFilesOpened - opened) decryptions")
        #expect(min(large.width, large.height) > 192)
        try FileManager.default.removeItem(atPath: t.location.thumbnailPath(item.id))
        #expect(try vault.photos.thumbnail(item.ref, size: .grid) == small, "the grid size was not kept from the tile's read")
        #expect(try vault.photos.thumbnail(item.ref, size: .preview) == large)
        #expect(try vault.photos.tileThumbnail(item.ref, need: 320) == large)
    }

    @Test("another session turns or moves a photo: this session's next listing marks it changed and drops its cached thumbnails; the one after does not")
    func changedElsewhere() throws {
        let t = try TestVault()
        t.close()
        // Two sessions as the app holds one: the vault's lock taken per operation.
        let mine = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        mine.releaseLockBetweenOperations()
        let other = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        other.releaseLockBetweenOperations()
        let turned = try mine.items.importFile(at: try jpeg(t, "t.jpg"))
        let moved = try mine.items.importFile(at: try jpeg(t, "m.jpg"))
        let still = try mine.items.importFile(at: try jpeg(t, "s.jpg"))
        #expect(try mine.items.libraryEntries().count == 3)
        let tile = try mine.photos.thumbnail(turned.ref, size: .grid)
        #expect(tile.width == 256 && tile.height == 192)
        _ = try mine.photos.thumbnail(still.ref, size: .grid)
        // The other process (as the command line would) turns one photo and moves another.
        _ = try other.photos.rotate(turned.ref, quarterTurns: 1)
        _ = try other.albums.createAlbum("Trips")
        try other.albums.moveItem(moved.ref, toAlbum: "Trips")
        let entries = try mine.items.libraryEntries()
        let changed = Set(entries.filter(\.changed).map(\.id))
        #expect(changed == [turned.id, moved.id], "changed: \(changed)")
        #expect(mine.previewCache.get(CachedPart(id: turned.id, part: .grid)) == nil, "the turned photo's old thumbnail is still served")
        #expect(mine.previewCache.get(CachedPart(id: still.id, part: .grid)) != nil, "an unchanged photo's thumbnail was dropped")
        let now = try mine.photos.thumbnail(turned.ref, size: .grid)
        #expect(now.width == 192 && now.height == 256, "this session shows the photo unturned: \(now.width)x\(now.height)")
        #expect(try mine.items.libraryEntries().allSatisfy { !$0.changed }, "a change is reported twice")
        // Into Fade by the other session (the ID kept): reported once, not at every listing.
        #expect(try other.items.setFade(still.ref, seconds: 3600) == still.id)
        // (Under the vault's lock, as the app lists: the session reads the new deadline.)
        let afterFade = try mine.exclusive { try mine.items.libraryEntries() }
        #expect(Set(afterFade.filter(\.changed).map(\.id)) == [still.id], "\(afterFade.map { ($0.id == still.id, $0.changed) })")
        #expect(try mine.exclusive { try mine.items.libraryEntries() }.allSatisfy { !$0.changed },
                "a Fade item is reported changed at every listing")
    }
}
