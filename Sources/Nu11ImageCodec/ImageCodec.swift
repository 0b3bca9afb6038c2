// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Image
import Foundation
import Nu11Format
import Nu11Media

/// Decoding with libvips, from memory only. See docs/THREAT-MODEL.md (“Images”).
public enum ImageCodec {
    public static let maxPixels = ImageLimits.maxPixels
    public static let gridSize = ImageLimits.gridSize
    public static let previewSize = ImageLimits.previewSize
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
    /// `turns`: quarter turns clockwise after that (the user's rotation).
    public static func thumbnails(_ bytes: UnsafeRawBufferPointer, grid: Int = gridSize,
                                  preview: Int = previewSize, turns: Int = 0) throws(ImageDecodeError) -> ThumbnailPair {
        _ = try header(bytes)
        var p: UnsafeMutableRawPointer?, g: UnsafeMutableRawPointer?
        var pn = 0, gn = 0
        var pw: Int32 = 0, ph: Int32 = 0, gw: Int32 = 0, gh: Int32 = 0, webp: Int32 = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress,
              nu11_image_thumbnails(base, bytes.count, Int32(turns & 3), Int32(preview), Int32(grid), quality, &p, &pn, &pw, &ph,
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
    public static func png(_ bytes: UnsafeRawBufferPointer, maxSide: Int, turns: Int = 0) throws(ImageDecodeError) -> [UInt8] {
        _ = try header(bytes)
        var out: UnsafeMutableRawPointer?
        var count = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress, nu11_image_png(base, bytes.count, Int32(maxSide), Int32(turns & 3), &out, &count, &err, err.count) == 0,
              let out else {
            throw ImageDecodeError(reason: message(err, "the image cannot be decoded"))
        }
        defer { nu11_image_free(out, count) }
        return Array(UnsafeRawBufferPointer(start: out, count: count))
    }

    /// Raw 8-bit sRGB pixels, its long side at most `maxSide`: the helper's `pixels` answer
    /// (`ImageWire.RawImage`'s payload).
    public static func pixels(_ bytes: UnsafeRawBufferPointer, maxSide: Int, turns: Int = 0) throws(ImageDecodeError) -> [UInt8] {
        _ = try header(bytes)
        var out: UnsafeMutableRawPointer?
        var count = 0
        var width: Int32 = 0, height: Int32 = 0, bands: Int32 = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress,
              nu11_image_pixels(base, bytes.count, Int32(maxSide), Int32(turns & 3), &out, &count, &width, &height, &bands, &err, err.count) == 0,
              let out else {
            throw ImageDecodeError(reason: message(err, "the image cannot be decoded"))
        }
        defer { nu11_image_free(out, count) }
        return ImageWire.RawImage.header(width: Int(width), height: Int(height), channels: Int(bands))
            + Array(UnsafeRawBufferPointer(start: out, count: count))
    }

    static func message(_ err: [CChar], _ fallback: String) -> String {
        let text = err.withUnsafeBufferPointer { ptr in
            ptr.baseAddress.map { String(cString: $0) } ?? ""
        }
        // libvips prefixes messages with the operation ("VipsJpeg: "); keep the reason.
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? fallback : trimmed
    }
}

/// Videos: FFmpeg opens the container from memory and decodes its first picture (CNu11Image/video.c);
/// libvips makes the thumbnails of that picture.
extension ImageCodec {
    public static func video(_ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) -> VideoAnalysis {
        var info = nu11_video_info()
        var rgb: UnsafeMutableRawPointer?
        var count = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress,
              nu11_video_poster(base, bytes.count, maxPixels, &info, &rgb, &count, &err, err.count) == 0, let rgb else {
            throw ImageDecodeError(reason: message(err, "the video cannot be decoded"))
        }
        defer { nu11_image_free(rgb, count) }
        var p: UnsafeMutableRawPointer?, g: UnsafeMutableRawPointer?
        var pn = 0, gn = 0
        var pw: Int32 = 0, ph: Int32 = 0, gw: Int32 = 0, gh: Int32 = 0
        guard nu11_image_thumbnails_rgb(rgb, info.width, info.height, info.rotate, Int32(previewSize), Int32(gridSize), quality,
                                        &p, &pn, &pw, &ph, &g, &gn, &gw, &gh, &err, err.count) == 0, let p, let g else {
            throw ImageDecodeError(reason: message(err, "the video's poster cannot be made"))
        }
        defer {
            nu11_image_free(p, pn)
            nu11_image_free(g, gn)
        }
        let turned = info.rotate == 90 || info.rotate == 270
        let created = withUnsafeBytes(of: info.created) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        return VideoAnalysis(
            width: Int(turned ? info.height : info.width), height: Int(turned ? info.width : info.height),
            durationMS: info.duration_ms >= 0 ? Int(info.duration_ms) : nil, created: created.isEmpty ? nil : created,
            hasLocation: info.has_location != 0,
            thumbnails: ThumbnailPair(
                grid: EncodedThumbnail(encoding: .jpeg, width: Int(gw), height: Int(gh), bytes: Array(UnsafeRawBufferPointer(start: g, count: gn))),
                preview: EncodedThumbnail(encoding: .jpeg, width: Int(pw), height: Int(ph), bytes: Array(UnsafeRawBufferPointer(start: p, count: pn)))))
    }

    /// Whether FFmpeg finds a location in the container's metadata (it decodes nothing).
    public static func videoHasLocation(_ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) -> Bool {
        var err = [CChar](repeating: 0, count: 256)
        guard let base = bytes.baseAddress else { throw ImageDecodeError(reason: "the video is empty") }
        let found = nu11_video_has_location(base, bytes.count, &err, err.count)
        guard found >= 0 else { throw ImageDecodeError(reason: message(err, "the video's container cannot be read")) }
        return found == 1
    }
}
