#if canImport(Glibc)
import Glibc
#endif
import CNu11Image
import Nu11ImageCodec
import Nu11Media

// nu11vlt-image-helper: decodes images for nu11vlt in a process that holds no key.
// Requests come on stdin and answers go to stdout (Nu11Media's ImageWire); it locks itself
// down (CNu11Image/sandbox.c) before it reads the first image byte. `--probe` reports
// what the lock-down refuses (for the tests).

/// libvips's threads, the decoded preview and the copies of the image fit well under this;
/// a decoder that wants more fails, and only this process dies.
let memoryLimit: UInt64 = 1536 << 20

func writeAll(_ bytes: [UInt8]) -> Bool {
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress.map { $0 + done }, bytes.count - done) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        done += n
    }
    return true
}

func readAll(_ count: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
        let n = bytes.withUnsafeMutableBytes { read(0, $0.baseAddress.map { $0 + done }, count - done) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return nil }
        done += n
    }
    return bytes
}

func answer(_ result: Result<[UInt8], ImageDecodeError>) -> Bool {
    switch result {
    case .success(let payload): return writeAll(ImageWire.responseHeader(ok: true, length: payload.count) + payload)
    case .failure(let error):
        let text = Array(error.reason.utf8.prefix(400))
        return writeAll(ImageWire.responseHeader(ok: false, length: text.count) + text)
    }
}

var err = [CChar](repeating: 0, count: 256)
guard nu11_image_init(&err, err.count) == 0, nu11_sandbox_enter(memoryLimit) == 0 else { exit(70) }
if CommandLine.arguments.dropFirst().first == "--probe" {
    print(nu11_sandbox_probe())
    exit(0)
}
while let head = readAll(ImageWire.requestHeaderSize) {
    let (op, arg, length) = ImageWire.parseRequestHeader(head)
    guard let op, length <= ImageWire.maxRequest, var image = readAll(Int(length)) else { exit(65) }
    let result: Result<[UInt8], ImageDecodeError> = image.withUnsafeBytes { raw in
        do {
            switch op {
            case .analyze:
                let header = try ImageCodec.header(raw)
                let exif = try ImageCodec.exif(raw)
                let thumbnails = try ImageCodec.thumbnails(raw)
                return .success(ImageWire.encode(ImageWire.Analysis(header: header, exif: exif, thumbnails: thumbnails)))
            case .exif: return .success(try ImageCodec.exif(raw) ?? [])
            case .png: return .success(try ImageCodec.png(raw, maxSide: Int(arg)))
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
