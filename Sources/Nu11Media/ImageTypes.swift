// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// What nu11vlt decodes, and the limits it decodes within. The decoding itself runs in a
/// separate process without keys (`nu11vlt-image-helper`, see `ImageHelper`).
public enum ImageLimits {
    /// Images with more pixels are refused before any pixel is decoded (a decompression
    /// bomb declares huge dimensions in a small file). 200 MP covers phone sensors.
    public static let maxPixels: Int64 = 200_000_000
    /// The long side of the grid tile and of the screen preview, in pixels.
    public static let gridSize = 256
    public static let previewSize = 1600
    /// Images larger than this get no thumbnail (the whole file is held in memory).
    public static let maxBytes = 128 << 20
}

/// The image formats nu11vlt decodes (libvips's trusted loaders), told by their first bytes.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, png, gif, webp, tiff, heif

    /// The format the first bytes of a file announce, or nil. The name is never trusted.
    public static func sniff(_ head: some Collection<UInt8>) -> ImageFormat? {
        let b = Array(head.prefix(16))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && Array(b[offset..<(offset + magic.count)]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12,
           let brand = String(bytes: b[8..<12], encoding: .ascii),
           ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis"].contains(brand) {
            return .heif
        }
        return nil
    }

    /// The format a file name's extension suggests (used only to warn when the content is
    /// not what the name says).
    public static func suggested(byName name: String) -> ImageFormat? {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg", "jpe": .jpeg
        case "png": .png
        case "gif": .gif
        case "webp": .webp
        case "tif", "tiff": .tiff
        case "heic", "heif", "avif": .heif
        default: nil
        }
    }

    public var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .gif: "GIF"
        case .webp: "WebP"
        case .tiff: "TIFF"
        case .heif: "HEIC/AVIF"
        }
    }
}

/// What an image's header says, as displayed (after its EXIF orientation).
public struct ImageHeader: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var orientation: Int
    public var hasAlpha: Bool

    public init(width: Int, height: Int, orientation: Int, hasAlpha: Bool) {
        self.width = width
        self.height = height
        self.orientation = orientation
        self.hasAlpha = hasAlpha
    }
}

/// The two thumbnails of a photo, encoded (JPEG, or WebP for images with alpha).
public struct ThumbnailPair: Sendable {
    public var grid: EncodedThumbnail
    public var preview: EncodedThumbnail

    public init(grid: EncodedThumbnail, preview: EncodedThumbnail) {
        self.grid = grid
        self.preview = preview
    }
}

/// One encoded thumbnail.
public struct EncodedThumbnail: Sendable, Equatable {
    public enum Encoding: UInt8, Sendable { case jpeg = 1, webp = 2 }
    public var encoding: Encoding
    public var width: Int
    public var height: Int
    public var bytes: [UInt8]

    public init(encoding: Encoding, width: Int, height: Int, bytes: [UInt8]) {
        self.encoding = encoding
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    public var fileExtension: String { encoding == .jpeg ? "jpg" : "webp" }
}

/// Why an image got no thumbnail (the item is still imported, as a plain file).
public struct ImageDecodeError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}


/// The thumbnails as the sealed bundle holds them (docs/FORMAT.md § 2.1): size 1 is the
/// grid tile, size 2 the screen preview.
extension ThumbnailPair {
    public static let gridCode: UInt8 = 1
    public static let previewCode: UInt8 = 2

    public var bundleImages: [ThumbnailEnvelope.Image] {
        [(Self.gridCode, grid), (Self.previewCode, preview)].map { code, t in
            ThumbnailEnvelope.Image(size: code, encoding: t.encoding.rawValue, width: t.width, height: t.height, bytes: t.bytes)
        }
    }
}

extension EncodedThumbnail {
    /// The bundle's image of the given size, or nil when it is absent or of an unknown encoding.
    public init?(_ images: [ThumbnailEnvelope.Image], size: UInt8) {
        guard let image = images.first(where: { $0.size == size }),
              let encoding = Encoding(rawValue: image.encoding) else { return nil }
        self.init(encoding: encoding, width: image.width, height: image.height, bytes: image.bytes)
    }
}
