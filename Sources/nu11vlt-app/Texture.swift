import CGtk
import Foundation
import Nu11Format
import Nu11Media

/// Decoding on the worker thread: an encoded thumbnail or image → a GdkTexture (immutable,
/// so it may be made off the main thread and shown on it). JPEG thumbnails are decoded by
/// GDK's own loader; WebP thumbnails (photos with transparency) and full images of any
/// format go through the sandboxed image helper, which returns PNG.
enum Texture {
    static func decode(_ thumb: EncodedThumbnail) throws -> OpaquePointer? {
        switch thumb.encoding {
        case .jpeg: return try fromEncoded(thumb.bytes)
        case .webp: return try fromEncoded(ImageHelper.shared.png(thumb.bytes, maxSide: max(thumb.width, thumb.height)))
        }
    }

    /// A full image, scaled by the helper to at most `maxSide` pixels.
    static func decodeImage(_ bytes: [UInt8], maxSide: Int) throws -> OpaquePointer? {
        try fromEncoded(ImageHelper.shared.png(bytes, maxSide: maxSide))
    }

    static func fromEncoded(_ bytes: [UInt8]) throws -> OpaquePointer? {
        let gbytes = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(gbytes) }
        var error: UnsafeMutablePointer<GError>?
        guard let texture = gdk_texture_new_from_bytes(gbytes, &error) else {
            let message = error.map { string($0.pointee.message) } ?? "unknown format"
            if let error { g_error_free(error) }
            throw Nu11Error(.corrupted, "the image cannot be shown (\(message))", remedy: "export it and open it in another viewer")
        }
        return texture
    }
}

/// A texture crossing from the worker to the main thread (one owner at a time).
final class TextureBox: @unchecked Sendable {
    let texture: OpaquePointer?
    init(_ texture: OpaquePointer?) { self.texture = texture }
    deinit { if let texture { g_object_unref(UnsafeMutableRawPointer(texture)) } }
}

/// Textures of recently shown tiles, least recently used out first (main thread only).
struct TextureCache {
    let capacity: Int
    private var entries: [String: (texture: OpaquePointer, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) { self.capacity = capacity }

    mutating func get(_ id: String) -> OpaquePointer? {
        guard let entry = entries[id] else { return nil }
        clock += 1
        entries[id] = (entry.texture, clock)
        return entry.texture
    }

    mutating func set(_ id: String, _ texture: OpaquePointer) {
        g_object_ref(UnsafeMutableRawPointer(texture))
        remove(id)
        clock += 1
        entries[id] = (texture, clock)
        if entries.count > capacity, let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key {
            remove(oldest)
        }
    }

    mutating func remove(_ id: String) {
        if let old = entries.removeValue(forKey: id) { g_object_unref(UnsafeMutableRawPointer(old.texture)) }
    }

    mutating func removeAll() {
        for (_, entry) in entries { g_object_unref(UnsafeMutableRawPointer(entry.texture)) }
        entries.removeAll()
    }
}
