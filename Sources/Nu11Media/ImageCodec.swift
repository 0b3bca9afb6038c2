import CNu11Image
import Foundation
import Nu11Format

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
}

/// The two thumbnails of a photo, encoded (JPEG, or WebP for images with alpha).
public struct ThumbnailPair: Sendable {
    public var grid: EncodedThumbnail
    public var preview: EncodedThumbnail
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
    public var description: String { reason }
}

/// Decoding with libvips, from memory only. See docs/THREAT-MODEL.md (“Images”).
public enum ImageCodec {
    /// Images with more pixels are refused before any pixel is decoded (a decompression
    /// bomb declares huge dimensions in a small file). 200 MP covers phone sensors.
    public static let maxPixels: Int64 = 200_000_000
    /// The long side of the grid tile and of the screen preview, in pixels.
    public static let gridSize = 256
    public static let previewSize = 1600
    public static let quality: Int32 = 82

    public static func header(_ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) -> ImageHeader {
        var out = nu11_image_header()
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress,
              nu11_image_header_read(base, bytes.count, maxPixels, &out, &err, err.count) == 0 else {
            throw ImageDecodeError(reason: message(err, "the image header cannot be read"))
        }
        return ImageHeader(width: Int(out.width), height: Int(out.height), orientation: Int(out.orientation),
                           hasAlpha: out.has_alpha != 0)
    }

    /// The image's EXIF block, if it has one (the TIFF structure, perhaps after "Exif\0\0").
    public static func exif(_ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) -> [UInt8]? {
        var data: UnsafeMutableRawPointer?
        var count = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress, nu11_image_exif(base, bytes.count, &data, &count, &err, err.count) == 0 else {
            throw ImageDecodeError(reason: message(err, "the image cannot be read"))
        }
        guard let data else { return nil }
        defer { nu11_image_free(data, count) }
        return Array(UnsafeRawBufferPointer(start: data, count: count))
    }

    /// Both thumbnails, upright; the header is checked first (pixel limit).
    public static func thumbnails(_ bytes: UnsafeRawBufferPointer, grid: Int = gridSize,
                                  preview: Int = previewSize) throws(ImageDecodeError) -> ThumbnailPair {
        _ = try header(bytes)
        var p: UnsafeMutableRawPointer?, g: UnsafeMutableRawPointer?
        var pn = 0, gn = 0
        var pw: Int32 = 0, ph: Int32 = 0, gw: Int32 = 0, gh: Int32 = 0, webp: Int32 = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress,
              nu11_image_thumbnails(base, bytes.count, Int32(preview), Int32(grid), quality, &p, &pn, &pw, &ph,
                                    &g, &gn, &gw, &gh, &webp, &err, err.count) == 0, let p, let g else {
            throw ImageDecodeError(reason: message(err, "the image cannot be decoded"))
        }
        defer {
            nu11_image_free(p, pn)
            nu11_image_free(g, gn)
        }
        let encoding: EncodedThumbnail.Encoding = webp != 0 ? .webp : .jpeg
        return ThumbnailPair(
            grid: EncodedThumbnail(encoding: encoding, width: Int(gw), height: Int(gh),
                                   bytes: Array(UnsafeRawBufferPointer(start: g, count: gn))),
            preview: EncodedThumbnail(encoding: encoding, width: Int(pw), height: Int(ph),
                                      bytes: Array(UnsafeRawBufferPointer(start: p, count: pn))))
    }

    /// The image as PNG, its long side at most `maxSide` (kitty's graphics protocol takes PNG).
    public static func png(_ bytes: UnsafeRawBufferPointer, maxSide: Int) throws(ImageDecodeError) -> [UInt8] {
        _ = try header(bytes)
        var out: UnsafeMutableRawPointer?
        var count = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress, nu11_image_png(base, bytes.count, Int32(maxSide), &out, &count, &err, err.count) == 0,
              let out else {
            throw ImageDecodeError(reason: message(err, "the image cannot be decoded"))
        }
        defer { nu11_image_free(out, count) }
        return Array(UnsafeRawBufferPointer(start: out, count: count))
    }

    private static func message(_ err: [CChar], _ fallback: String) -> String {
        let text = err.withUnsafeBufferPointer { ptr in
            ptr.baseAddress.map { String(cString: $0) } ?? ""
        }
        // libvips prefixes messages with the operation ("VipsJpeg: "); keep the reason.
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? fallback : trimmed
    }
}
