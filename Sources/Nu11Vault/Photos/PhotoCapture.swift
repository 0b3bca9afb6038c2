// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media

/// What the import learned about a photo or a video, in the same pass as its encryption.
struct PhotoFacts {
    /// The media type, from the content.
    var type: String
    var width: Int
    var height: Int
    var taken: Date?
    var camera: String?
    var hasGPS: Bool
    var thumbnails: ThumbnailPair?
    /// Videos: seconds.
    var duration: Double?
}

extension ImageFormat {
    var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .tiff: "image/tiff"
        case .heif: "image/heic"
        }
    }
}

/// Keeps a copy of what an import reads, while it is encrypted, when the first bytes say
/// it is an image or a video (and it is not too large): the thumbnails (a video's from its
/// first picture) are made from that copy after the last chunk is sealed, so the file is read
/// once. Memory only, and only in a `MemorySink`: reserved to the file's size when it is known
/// up front (`prejudge`), and otherwise grown by copying into a new block and zeroing the old
/// one — an `Array` that grows frees its old copies unzeroed, up to 128 MiB of a photo. Zeroed
/// when done.
final class PhotoCapture {
    /// Images larger than this import without a thumbnail (and say so).
    static let maxBytes = ImageLimits.maxBytes
    let name: String
    /// The copy. Never a `[UInt8]` (PhotoCaptureTests looks).
    private(set) var storage: MemorySink
    private var decided = false
    private(set) var format: ImageFormat?
    private(set) var video: VideoFormat?
    private(set) var tooLarge = false

    init(name: String) {
        self.name = name
        storage = MemorySink()
    }

    /// A test seam: the storage to fill (one with a witness of every block it frees).
    init(name: String, storage: MemorySink) {
        self.name = name
        self.storage = storage
    }

    var count: Int { storage.count }

    func take(_ chunk: UnsafeRawBufferPointer) {
        if decided && format == nil && video == nil || tooLarge { return }
        if storage.count + chunk.count > Self.maxBytes {
            tooLarge = true
            drop()
            return
        }
        do { try storage.write(chunk) } catch {
            // A memory sink does not fail; if it ever did, no copy is better than half of one.
            tooLarge = true
            drop()
            return
        }
        if !decided && storage.count >= 16 { decide() }
    }

    /// Decides from a file's first bytes and size, before any read: true when no copy is
    /// needed (not an image, or too large for a thumbnail), so the file may be mapped. When a
    /// copy is needed, its storage is reserved to the whole size now: it never grows.
    func prejudge(first: [UInt8], size: UInt64) -> Bool {
        guard !decided, storage.count == 0, first.count >= 16 || UInt64(first.count) == size else { return false }
        decided = true
        format = ImageFormat.sniff(first)
        video = format == nil ? VideoFormat.sniff(first) : nil
        if (format != nil || video != nil) && size > UInt64(Self.maxBytes) { tooLarge = true }
        let skip = format == nil && video == nil || tooLarge
        if !skip { storage.reserve(Int(size)) }
        return skip
    }

    private func decide() {
        decided = true
        format = storage.withUnsafeBytes { ImageFormat.sniff($0) }
        video = format == nil ? storage.withUnsafeBytes { VideoFormat.sniff($0) } : nil
        if format == nil && video == nil { drop() }
    }

    /// Zeroes the copy and gives its memory back (the storage zeroes a block before it frees it).
    private func drop() {
        storage.zero()
        storage = MemorySink()
    }

    /// Decodes the copy: image facts and thumbnails, or a one-line warning for a file that
    /// looks like an image but cannot be one. Zeroes the copy. `turns`: the user's quarter
    /// turns clockwise (`Photos.rotate`), applied to an image's thumbnails and displayed size.
    func analyze(turns: Int = 0) -> (facts: PhotoFacts?, warning: String?) {
        if !decided { decide() }
        defer { drop() }
        let suggested = ImageFormat.suggested(byName: name)
        if let video { return analyzeVideo(video) }
        guard let format else {
            guard let suggested else { return (nil, nil) }
            return (nil, "\(name): not a \(suggested.displayName) image (its content is not an image format Nu11VLT reads); imported as a plain file, without a thumbnail")
        }
        if tooLarge {
            return (nil, "\(name): larger than \(Self.maxBytes >> 20) MiB, too large for a thumbnail; imported without one")
        }
        do {
            let analysis = try storage.withUnsafeBytes { bytes throws(ImageDecodeError) in
                try ImageHelper.shared.analyze(bytes, turns: turns)
            }
            let exif = analysis.exif.map(ExifSummary.parse)
            let sideways = turns % 2 != 0
            let width = sideways ? analysis.header.height : analysis.header.width
            let height = sideways ? analysis.header.width : analysis.header.height
            return (PhotoFacts(type: format.mimeType, width: width, height: height, taken: exif?.takenDate,
                               camera: exif?.camera, hasGPS: exif?.hasGPS ?? false, thumbnails: analysis.thumbnails), nil)
        } catch {
            return (nil, "\(name): not decoded as a \(format.displayName) image (\(error.reason)); imported as a plain file, without a thumbnail")
        }
    }

    /// Whether the name's type (`guessed`) is an image or a video the content is not: the
    /// item is then typed by its content (unknown), never by its name.
    func claimsWrongType(_ guessed: String) -> Bool {
        ImageFormat.suggested(byName: name) != nil || guessed.hasPrefix("video/") && video == nil
    }

    /// A video: its poster frame, duration and creation date, from the helper (FFmpeg there).
    private func analyzeVideo(_ video: VideoFormat) -> (facts: PhotoFacts?, warning: String?) {
        if tooLarge {
            return (nil, "\(name): larger than \(Self.maxBytes >> 20) MiB, too large for a poster frame; imported without one")
        }
        do {
            let analysis = try storage.withUnsafeBytes { bytes throws(ImageDecodeError) in try ImageHelper.shared.video(bytes) }
            return (PhotoFacts(type: video.mimeType, width: analysis.width, height: analysis.height,
                               taken: analysis.created.flatMap(VideoDate.parse), camera: nil, hasGPS: analysis.hasLocation,
                               thumbnails: analysis.thumbnails, duration: analysis.durationMS.map { Double($0) / 1000 }), nil)
        } catch {
            return (nil, "\(name): no poster frame (\(error.reason)); imported as a video without a thumbnail")
        }
    }

    deinit { storage.zero() }
}

/// A source that hands what it reads to a `PhotoCapture` too.
struct CapturingSource<Base: ByteSource>: ByteSource {
    var base: Base
    let capture: PhotoCapture

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try base.read(into: buffer)
        if n > 0 { capture.take(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) }
        return n
    }

    /// A file that is not an image (or too large for a thumbnail) needs no copy: it may be
    /// mapped like any other.
    func mappableRegion() -> MappableRegion? {
        guard let region = base.mappableRegion() else { return nil }
        var first = [UInt8](repeating: 0, count: Int(min(64, region.length)))
        let n = first.withUnsafeMutableBytes { b in b.baseAddress.map { pread(region.fd, $0, b.count, off_t(region.offset)) } ?? 0 }
        guard n == first.count else { return nil }
        return capture.prejudge(first: first, size: region.length) ? region : nil
    }
}
