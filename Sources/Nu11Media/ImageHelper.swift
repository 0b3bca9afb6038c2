// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Nu11Format
import SystemPackage
import Glibc
#endif
import CNu11Sys
import Foundation

/// Decoding runs in another process: `nu11vlt-image-helper`, installed next to `nu11vlt`.
/// It holds no key, gets nothing but the image bytes on a pipe, and locks itself down
/// before it reads any (seccomp: no sockets, no files opened for writing, no exec; a
/// memory limit; no core dumps). A bug in an image decoder then reaches neither the keys
/// nor the disk nor the network. libvips (and what Debian links it with) is loaded only
/// there; the `nu11vlt` binary links no image library at all.
///
/// The helpers serve a whole command: one, while one request at a time is made (the usual
/// case), and up to `maxHelpers` (one per core, at most 4) when several threads ask at once —
/// a folder import decodes its photos on every core (`Items.importFiles`). Each is its own
/// `nu11vlt-image-helper` process under the same lock-down; a request goes to the lowest idle
/// one. If one dies (a hostile image, the memory limit), that image gets no thumbnail and the
/// next request to it starts a new helper.
public final class ImageHelper: @unchecked Sendable {
    public static let shared = ImageHelper()
    public static let executableName = "nu11vlt-image-helper"
    /// How many helpers may run at once.
    public static let maxHelpers = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    // @unchecked Sendable: `busy` is read and written under `pick` only; each slot is used by
    // the one thread that marked it busy, until it marks it idle again.
    private let slots: [HelperProcess]
    private var busy: [Bool]
    private let pick = NSLock()
    private let idle: DispatchSemaphore

    init(count: Int = ImageHelper.maxHelpers) {
        slots = (0..<max(1, count)).map { _ in HelperProcess() }
        busy = Array(repeating: false, count: slots.count)
        idle = DispatchSemaphore(value: slots.count)
    }

    /// The helper next to the running executable (/proc/self/exe: a build folder, or
    /// `make install PREFIX=…` with everything in bin/), else in the package's libexec folder
    /// beside that bin/ (`/usr/bin/nu11vlt` → `/usr/libexec/nu11vlt/`), or nil.
    static func locate() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let folder = (exe as NSString).deletingLastPathComponent
        let prefix = (folder as NSString).deletingLastPathComponent
        for path in [folder + "/" + executableName, prefix + "/libexec/nu11vlt/" + executableName]
        where access(path, X_OK) == 0 {
            return path
        }
        return nil
    }

    /// Decodes an image: its header, EXIF block and both thumbnails.
    public func analyze(_ bytes: [UInt8]) throws(ImageDecodeError) -> ImageWire.Analysis {
        try ImageWire.decodeAnalysis(request(.analyze, arg: 0, bytes))
    }

    /// The same, for bytes held elsewhere (a zeroing buffer): no copy is made.
    /// `turns`: quarter turns clockwise the thumbnails get after EXIF's orientation (the
    /// user's rotation); the header stays as EXIF shows the image.
    public func analyze(_ bytes: UnsafeRawBufferPointer, turns: Int = 0) throws(ImageDecodeError) -> ImageWire.Analysis {
        try ImageWire.decodeAnalysis(request(.analyze, arg: UInt32(((turns % 4) + 4) % 4), bytes))
    }

    /// A video's poster frame (its first picture) as thumbnails, and its container's facts.
    public func video(_ bytes: [UInt8]) throws(ImageDecodeError) -> VideoAnalysis {
        try ImageWire.decodeVideo(request(.video, arg: 0, bytes))
    }

    /// The same, for bytes held elsewhere (a zeroing buffer): no copy is made.
    public func video(_ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) -> VideoAnalysis {
        try ImageWire.decodeVideo(request(.video, arg: 0, bytes))
    }

    /// Whether FFmpeg (in the helper's lock-down) sees a location in a video's container.
    public func videoHasLocation(_ bytes: [UInt8]) throws(ImageDecodeError) -> Bool {
        let answer = try request(.videoLocation, arg: 0, bytes)
        guard answer.count == 1, answer[0] <= 1 else { throw ImageDecodeError(reason: "the image helper answered nonsense") }
        return answer[0] == 1
    }

    /// The image's EXIF block, if it has one.
    public func exif(_ bytes: [UInt8]) throws(ImageDecodeError) -> [UInt8]? {
        let block = try request(.exif, arg: 0, bytes)
        return block.isEmpty ? nil : block
    }

    /// The image as PNG, upright, its long side at most `maxSide`.
    public func png(_ bytes: [UInt8], maxSide: Int, turns: Int = 0) throws(ImageDecodeError) -> [UInt8] {
        try request(.png, arg: ImageWire.sideAndTurns(side: maxSide, turns: turns), bytes)
    }

    /// The image as raw pixels, upright, its long side at most `maxSide` (1...16384): for
    /// display in a process that holds keys, which then parses nothing a decoder produced.
    /// `turns`: quarter turns clockwise after that (the user's rotation).
    public func pixels(_ bytes: [UInt8], maxSide: Int, turns: Int = 0) throws(ImageDecodeError) -> ImageWire.RawImage {
        let side = min(max(maxSide, 1), 16384)
        var payload = try request(.pixels, arg: ImageWire.sideAndTurns(side: side, turns: turns), bytes)
        defer { for i in payload.indices { payload[i] = 0 } }
        return try ImageWire.RawImage.parse(payload, maxSide: side)
    }

    /// Starts the first helper ahead of the first request (the app does, before its unlock
    /// screen, so that the first screen after unlock does not wait for libvips to start).
    public func warmUp() {
        let slot = take()
        defer { give(slot) }
        try? slots[slot].start()
    }

    func request(_ op: ImageWire.Op, arg: UInt32, _ bytes: [UInt8]) throws(ImageDecodeError) -> [UInt8] {
        var result: Result<[UInt8], ImageDecodeError> = .failure(ImageDecodeError(reason: "no request"))
        bytes.withUnsafeBytes { raw in
            do throws(ImageDecodeError) { result = .success(try request(op, arg: arg, raw)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    func request(_ op: ImageWire.Op, arg: UInt32, _ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) -> [UInt8] {
        guard bytes.count <= Int(ImageWire.maxRequest) else {
            throw ImageDecodeError(reason: "larger than \(ImageLimits.maxBytes >> 20) MiB")
        }
        let slot = take()
        defer { give(slot) }
        return try slots[slot].request(op, arg: arg, bytes)
    }

    /// Ends every helper this process started (their pipes closed: each exits at the end of its
    /// input) and reaps it. Run at exit (`atexit`, registered when the first helper starts), so a
    /// helper never outlives its parent and its CPU time is counted in the parent's (`wait4`).
    func stopAll() {
        for slot in slots { slot.stop() }
    }

    /// The lowest idle helper, marked busy (waits while all are busy).
    private func take() -> Int {
        idle.wait()
        pick.lock()
        defer { pick.unlock() }
        let slot = busy.firstIndex(of: false) ?? 0
        busy[slot] = true
        return slot
    }

    private func give(_ slot: Int) {
        pick.lock()
        busy[slot] = false
        pick.unlock()
        idle.signal()
    }
}

/// One helper process and its pipes, used by one request at a time (`ImageHelper` sees to it).
private final class HelperProcess {
    private var toChild: Int32 = -1
    private var fromChild: Int32 = -1
    private var pid: Int32 = 0
    private var unavailable: String?

    func request(_ op: ImageWire.Op, arg: UInt32, _ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) -> [UInt8] {
        try start()
        var payload: [UInt8] = []
        let ok: Bool
        do {
            try writeAll(ImageWire.requestHeader(op, arg: arg, length: bytes.count))
            try writeAll(bytes)
            var header = [UInt8](repeating: 0, count: ImageWire.responseHeaderSize)
            try readAll(&header)
            let parsed = ImageWire.parseResponseHeader(header)
            guard parsed.length <= ImageWire.maxResponse else { throw ImageDecodeError(reason: "the image helper answered nonsense") }
            payload = [UInt8](repeating: 0, count: Int(parsed.length))
            try readAll(&payload)
            ok = parsed.ok
        } catch {
            stop()
            throw ImageDecodeError(reason: "the image decoder stopped on it (a damaged or hostile image, or over its memory limit)")
        }
        guard ok else { throw ImageDecodeError(reason: String(decoding: payload, as: UTF8.self)) }
        return payload
    }

    func start() throws(ImageDecodeError) {
        if toChild >= 0 { return }
        if let unavailable { throw ImageDecodeError(reason: unavailable) }
        guard let path = ImageHelper.locate() else {
            unavailable = "\(ImageHelper.executableName) is neither next to this program nor in ../libexec/nu11vlt/, so images are not decoded (reinstall the package)"
            throw ImageDecodeError(reason: unavailable ?? "")
        }
        // A helper that dies mid-request must not kill us with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        var input: Int32 = -1, output: Int32 = -1, child: Int32 = 0
        let rc = nu11_spawn_piped(path, &input, &output, &child)
        guard rc == 0 else {
            unavailable = "\(ImageHelper.executableName) cannot be started (\(String(cString: strerror(rc))))"
            throw ImageDecodeError(reason: unavailable ?? "")
        }
        toChild = input
        fromChild = output
        pid = child
        _ = Self.reapAtExit
    }

    /// Registered once: at exit, every helper is ended and reaped (`ImageHelper.stopAll`).
    private static let reapAtExit: Void = { atexit { ImageHelper.shared.stopAll() } }()

    func stop() {
        if toChild >= 0 { close(toChild) }
        if fromChild >= 0 { close(fromChild) }
        toChild = -1
        fromChild = -1
        if pid > 0 {
            var status: Int32 = 0
            _ = SystemIO.retrying { waitpid(pid, &status, 0) }
        }
        pid = 0
    }

    private func writeAll(_ bytes: [UInt8]) throws(ImageDecodeError) {
        do { try bytes.withUnsafeBytes { buffer in try SystemIO.writeAll(toChild, buffer) } } catch {
            throw ImageDecodeError(reason: "write")
        }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(ImageDecodeError) {
        do { try SystemIO.writeAll(toChild, bytes) } catch {
            throw ImageDecodeError(reason: "write")
        }
    }

    private func readAll(_ bytes: inout [UInt8]) throws(ImageDecodeError) {
        let count = bytes.count
        let filled = try? bytes.withUnsafeMutableBytes { buffer in try SystemIO.readFully(fromChild, into: buffer) }
        guard filled == count else { throw ImageDecodeError(reason: "read") }
    }

    deinit { stop() }
}
