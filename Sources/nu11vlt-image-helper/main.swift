// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Nu11Format
import SystemPackage
import Glibc
#endif
import CNu11Image
import Nu11ImageCodec
import Nu11Media

// nu11vlt-image-helper: decodes images for nu11vlt in a process that holds no key.
// Requests come on stdin and answers go to stdout (Nu11Media's ImageWire); it locks itself
// down (CNu11Image/sandbox.c) before it reads the first image byte. For the tests:
// `--probe` attempts every escape inside the lock-down and reports each (CNu11Image/probe.c),
// `--probe-seccomp` the same with the seccomp filter alone, `--probe-landlock` the file
// attempts with Landlock alone, `--probe-x32` makes an x32 call
// (the lock-down kills it), `--allow-list` prints the allowed system calls. None of them
// reads an image.

/// libvips's threads, the decoded preview and the copies of the image fit well under this;
/// a decoder that wants more fails, and only this process dies.
let memoryLimit: UInt64 = 1536 << 20

func writeAll(_ bytes: [UInt8]) -> Bool {
    (try? bytes.withUnsafeBytes { buffer in try SystemIO.writeAll(1, buffer) }) != nil
}

func readAll(_ count: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    let filled = try? bytes.withUnsafeMutableBytes { buffer in try SystemIO.readFully(0, into: buffer) }
    return filled == count ? bytes : nil
}

func answer(_ result: Result<[UInt8], ImageDecodeError>) -> Bool {
    switch result {
    case .success(let payload): return writeAll(ImageWire.responseHeader(ok: true, length: payload.count) + payload)
    case .failure(let error):
        let text = Array(error.reason.utf8.prefix(400))
        return writeAll(ImageWire.responseHeader(ok: false, length: text.count) + text)
    }
}

/// The probe's targets, from `--parent PID:ADDR --sibling PID:ADDR --file P --home-file P
/// --keystore-file P --new-file P` (hex addresses), read before the lock-down.
func probeTargets(_ args: ArraySlice<String>) -> nu11_probe_targets {
    var t = nu11_probe_targets()
    t.parent = getppid()
    var i = args.startIndex
    func process(_ value: String) -> (Int32, UInt64) {
        let parts = value.split(separator: ":")
        return (Int32(parts.first ?? "") ?? 0, parts.count > 1 ? UInt64(parts[1], radix: 16) ?? 0 : 0)
    }
    while i + 1 < args.endIndex {
        let value = args[i + 1]
        switch args[i] {
        case "--parent": (t.parent, t.parent_addr) = process(value)
        case "--sibling": (t.sibling, t.sibling_addr) = process(value)
        case "--file": t.visible_file = UnsafePointer(strdup(value))
        case "--home-file": t.home_file = UnsafePointer(strdup(value))
        case "--keystore-file": t.keystore_file = UnsafePointer(strdup(value))
        case "--new-file": t.new_file = UnsafePointer(strdup(value))
        default: break
        }
        i += 2
    }
    return t
}

/// One piece of a playing video, framed on stdout (`VideoStream`); non-zero stops decoding
/// (the app has gone: the write fails).
func playSink() -> nu11_play_sink {
    { _, kind, pts, a, b, data, length in
        guard let data else { return 1 }
        let header = kind == Int32(NU11_PLAY_FRAME)
            ? VideoStream.frameHeader(ptsMicros: pts, width: Int(a), height: Int(b))
            : VideoStream.audioHeader(ptsMicros: pts, rate: Int(a), channels: Int(b), bytes: length)
        return writeAll(header) && (try? SystemIO.writeAll(1, UnsafeRawBufferPointer(start: data, count: length))) != nil ? 0 : 1
    }
}

/// Plays a video to stdout, then the end (or a refusal); the helper exits after it.
func play(_ video: inout [UInt8], _ arg: UInt32) -> Int32 {
    let (maxSide, audio) = VideoStream.parseArg(arg)
    var err = [CChar](repeating: 0, count: 256)
    let rc = video.withUnsafeBytes { raw in
        nu11_video_play(raw.baseAddress, raw.count, Int32(maxSide), audio ? 1 : 0, playSink(), nil, &err, err.count)
    }
    for i in video.indices { video[i] = 0 }
    let reason = String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return writeAll(rc == 0 ? VideoStream.endMessage : VideoStream.refusal(reason)) ? 0 : 74
}

let mode = CommandLine.arguments.dropFirst().first
if mode == "--allow-list" {
    var i: Int32 = 0
    while let name = nu11_sandbox_allowed_name(i) {
        print("allowed " + String(cString: name))
        i += 1
    }
    i = 0
    while let name = nu11_sandbox_refused_name(i) {
        print("refused " + String(cString: name))
        i += 1
    }
    exit(0)
}
var err = [CChar](repeating: 0, count: 256)
guard nu11_image_init(&err, err.count) == 0 else { exit(70) }
if mode == "--probe-landlock" {
    var targets = probeTargets(CommandLine.arguments.dropFirst(2))
    guard nu11_sandbox_landlock_only() == 0 else { exit(70) }
    exit(nu11_sandbox_probe_files(&targets, 1) == 0 ? 0 : 1)
}
var targets = probeTargets(CommandLine.arguments.dropFirst(2))
if mode == "--probe-seccomp" {
    // The seccomp wall alone (Landlock refuses files and, from ABI 6, signals too: each wall
    // must hold by itself).
    guard nu11_sandbox_seccomp() == 0 else { exit(70) }
    exit(nu11_sandbox_probe(&targets, 1) == 0 ? 0 : 1)
}
guard nu11_sandbox_enter(memoryLimit) == 0 else { exit(70) }
switch mode {
case "--probe":
    let through = nu11_sandbox_probe(&targets, 1)
    let memory = nu11_sandbox_probe_memory(memoryLimit, 1)
    let abi = nu11_sandbox_landlock_abi()
    let summary = "landlock \(abi > 0 ? "ABI \(abi)" : "unavailable")\n"
    _ = summary.withCString { write(1, $0, strlen($0)) }
    exit(through == 0 && memory == 0 ? 0 : 1)
case "--probe-x32":
    nu11_sandbox_probe_x32()
    exit(1)
default: break
}
while let head = readAll(ImageWire.requestHeaderSize) {
    let (op, arg, length) = ImageWire.parseRequestHeader(head)
    guard let op, length <= (op == .play ? UInt64(VideoStream.maxInput) : ImageWire.maxRequest),
          var image = readAll(Int(length)) else { exit(65) }
    if op == .play { exit(play(&image, arg)) }
    let result: Result<[UInt8], ImageDecodeError> = image.withUnsafeBytes { raw in
        do {
            switch op {
            case .analyze:
                let header = try ImageCodec.header(raw)
                let exif = try ImageCodec.exif(raw)
                let thumbnails = try ImageCodec.thumbnails(raw, turns: Int(arg & 3))
                return .success(ImageWire.encode(ImageWire.Analysis(header: header, exif: exif, thumbnails: thumbnails)))
            case .exif: return .success(try ImageCodec.exif(raw) ?? [])
            case .png:
                let (side, turns) = ImageWire.splitSideAndTurns(arg)
                return .success(try ImageCodec.png(raw, maxSide: side, turns: turns))
            case .pixels:
                let (side, turns) = ImageWire.splitSideAndTurns(arg)
                return .success(try ImageCodec.pixels(raw, maxSide: side, turns: turns))
            case .video: return .success(ImageWire.encode(try ImageCodec.video(raw)))
            case .videoLocation: return .success([try ImageCodec.videoHasLocation(raw) ? 1 : 0])
            case .play: return .failure(ImageDecodeError(reason: "play is answered by a stream"))
            }
        } catch let error as ImageDecodeError {
            return .failure(error)
        } catch {
            return .failure(ImageDecodeError(reason: "\(error)"))
        }
    }
    for i in image.indices { image[i] = 0 }
    guard answer(result) else { exit(74) }
}
exit(0)
