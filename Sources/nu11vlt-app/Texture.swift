// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

/// Decoding on the worker thread: an encoded thumbnail or image → a GdkTexture (immutable,
/// so it may be made off the main thread and shown on it). This process holds keys, so it
/// decodes nothing: the sandboxed image helper turns every thumbnail and image into raw
/// 8-bit pixels, whose size fields are checked (`ImageWire.RawImage.parse`) before GDK wraps
/// them in a memory texture. No GDK or gdk-pixbuf image loader ever runs here.
enum Texture {
    static func decode(_ thumb: EncodedThumbnail) throws -> OpaquePointer? {
        try fromPixels(ImageHelper.shared.pixels(thumb.bytes, maxSide: max(thumb.width, thumb.height, 1)))
    }

    /// A gallery tile's picture for a screen of `scale` device pixels per pixel (the window's
    /// scale factor). The grid thumbnail (256 px on the long side) covers a 160 px tile at
    /// scale 1; at scale 2 the tile is 320 device pixels square, so the screen preview is
    /// scaled (by the helper) until its short side covers that, and the tile stays sharp.
    static func tile(_ vault: Vault, _ id: ItemID, scale: Int) throws -> OpaquePointer? {
        try tileSource(vault, id, scale: scale).decode()
    }

    /// What a tile's picture is decoded from: the encoded thumbnail read (and decrypted) from
    /// the vault, and the size to decode it to. Reading needs the vault (its worker thread);
    /// decoding needs only a helper, so several may run at once (`FirstScreen`).
    struct TileSource: Sendable {
        let bytes: [UInt8]
        let maxSide: Int

        func decode() throws -> OpaquePointer? {
            try fromPixels(ImageHelper.shared.pixels(bytes, maxSide: maxSide))
        }
    }

    /// Both sizes come from one decryption of the thumbnail file (`Photos.tileThumbnail`).
    static func tileSource(_ vault: Vault, _ id: ItemID, scale: Int) throws -> TileSource {
        let need = Tile.side * max(1, scale)
        let thumb = try vault.photos.tileThumbnail(ItemRef(id), need: need)
        // Scaled (by the helper) until its short side covers the tile, never enlarged.
        return TileSource(bytes: thumb.bytes, maxSide: tileSide(width: thumb.width, height: thumb.height, need: need))
    }

    /// The long side that gives an image of `width` × `height` a short side of `need` (never
    /// more than it has, nor more than four tiles across for a panorama).
    static func tileSide(width: Int, height: Int, need: Int) -> Int {
        let long = max(width, height, 1), short = max(1, min(width, height))
        return max(1, min(long, need * long / short, 4 * need))
    }

    /// A full image, scaled by the helper to at most `maxSide` pixels.
    /// `turns`: quarter turns clockwise after its own orientation (a photo the user rotated).
    static func decodeImage(_ bytes: [UInt8], maxSide: Int, turns: Int = 0) throws -> OpaquePointer? {
        try fromPixels(ImageHelper.shared.pixels(bytes, maxSide: maxSide, turns: turns))
    }

    static func fromPixels(_ image: ImageWire.RawImage) -> OpaquePointer? {
        let stride = image.width * image.channels
        let gbytes = image.pixels.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(gbytes) }
        let format = image.channels == 4 ? GDK_MEMORY_R8G8B8A8 : GDK_MEMORY_R8G8B8
        return gdk_memory_texture_new(Int32(image.width), Int32(image.height), format, gbytes, gsize(stride))
    }
}

/// A texture crossing from the worker to the main thread. The one `@unchecked Sendable` of
/// the app, and why it is sound: a GdkTexture is immutable once made (GTK documents textures
/// as safe to create off the main thread and to hand over), its reference count is atomic,
/// and the box only holds the reference; Swift cannot see that through an `OpaquePointer`.
final class TextureBox: @unchecked Sendable {
    let texture: OpaquePointer?
    init(_ texture: OpaquePointer?) { self.texture = texture }
    deinit { if let texture { g_object_unref(UnsafeMutableRawPointer(texture)) } }
}

/// Textures of recently shown tiles, least recently used out first (main thread only).
struct TextureCache {
    let capacity: Int
    private var entries: [ItemID: (texture: OpaquePointer, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) { self.capacity = capacity }

    mutating func get(_ id: ItemID) -> OpaquePointer? {
        guard let entry = entries[id] else { return nil }
        clock += 1
        entries[id] = (entry.texture, clock)
        return entry.texture
    }

    mutating func set(_ id: ItemID, _ texture: OpaquePointer) {
        g_object_ref(UnsafeMutableRawPointer(texture))
        remove(id)
        clock += 1
        entries[id] = (texture, clock)
        if entries.count > capacity, let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key {
            remove(oldest)
        }
    }

    mutating func remove(_ id: ItemID) {
        if let old = entries.removeValue(forKey: id) { g_object_unref(UnsafeMutableRawPointer(old.texture)) }
    }

    mutating func removeAll() {
        for (_, entry) in entries { g_object_unref(UnsafeMutableRawPointer(entry.texture)) }
        entries.removeAll()
    }
}
