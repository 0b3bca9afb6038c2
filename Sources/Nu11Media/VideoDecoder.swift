// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif
import CNu11Sys
import Foundation
import Nu11Format

/// One video playing: a `nu11vlt-image-helper` process of its own (under the same lock-down
/// as every other, see `ImageHelper`), fed the video's bytes over its pipe — the plaintext
/// is never a file — and read back as checked raw frames and PCM (`VideoStream.Reader`).
///
/// Used by one thread (the app's reading thread): `start`, then `next` until `.end`,
/// `.refused` or a throw, then `finish`. `cancel` may come from any thread: it kills the
/// helper, so a `next` blocked on the pipe returns (with a throw) at once.
public final class VideoDecoder: @unchecked Sendable {
    // @unchecked Sendable: `pid` and `reaped` are read and written under `lock` only; the
    // pipes and the reader belong to the one thread that started the decoder.
    private let lock = NSLock()
    private var pid: Int32 = 0
    private var reaped = false
    private var ending = "running"
    private var toChild: Int32 = -1
    private var fromChild: Int32 = -1
    private var reader: VideoStream.Reader

    /// Starts a helper and sends it `video` (at most `VideoStream.maxInput` bytes): frames
    /// scaled to at most `maxSide`, and sound when `audio`.
    public init(video: UnsafeRawBufferPointer, maxSide: Int, audio: Bool) throws(ImageDecodeError) {
        guard video.count <= VideoStream.maxInput else {
            throw ImageDecodeError(reason: "larger than \(VideoStream.maxInput >> 20) MiB, too large to play in the app (export it to play it)")
        }
        guard let path = ImageHelper.locate() else {
            throw ImageDecodeError(reason: "\(ImageHelper.executableName) is neither next to this program nor in ../libexec/nu11vlt/ (reinstall the package)")
        }
        signal(SIGPIPE, SIG_IGN)
        var input: Int32 = -1, output: Int32 = -1, child: Int32 = 0
        let rc = nu11_spawn_piped(path, &input, &output, &child)
        guard rc == 0 else { throw ImageDecodeError(reason: "\(ImageHelper.executableName) cannot be started (\(String(cString: strerror(rc))))") }
        toChild = input
        fromChild = output
        pid = child
        reader = VideoStream.Reader(fd: output, maxSide: maxSide)
        let arg = VideoStream.requestArg(maxSide: maxSide, audio: audio)
        do {
            let header = ImageWire.requestHeader(.play, arg: arg, length: video.count)
            try header.withUnsafeBytes { try SystemIO.writeAll(input, $0) }
            try SystemIO.writeAll(input, video)
        } catch {
            finish()
            throw ImageDecodeError(reason: "the video decoder stopped before it read the video")
        }
        close(toChild)
        toChild = -1
    }

    /// The next checked message (blocks until the helper sends it).
    public func next() throws(ImageDecodeError) -> VideoStream.Message {
        try reader.next()
    }

    /// Kills the helper (from any thread): the reading thread's `next` then throws.
    public func cancel() {
        lock.lock()
        defer { lock.unlock() }
        if pid > 0 && !reaped { kill(pid, SIGKILL) }
    }

    /// How the helper ended, for a log: "exit N" or "signal N" when it had ended by itself
    /// before `finish`, "killed" when `finish` ended it, "running" before `finish`.
    public var helperEnding: String {
        lock.lock()
        defer { lock.unlock() }
        return ending
    }

    /// Closes the pipes and waits for the helper (killed first if still running).
    public func finish() {
        if toChild >= 0 { close(toChild) }
        toChild = -1
        lock.lock()
        defer { lock.unlock() }
        if pid > 0 && !reaped {
            var status: Int32 = 0
            if SystemIO.retrying({ waitpid(pid, &status, WNOHANG) }) == pid {
                ending = status & 0x7f == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
            } else {
                kill(pid, SIGKILL)
                _ = SystemIO.retrying { waitpid(pid, &status, 0) }
                ending = "killed"
            }
            reaped = true
        }
        if fromChild >= 0 { close(fromChild) }
        fromChild = -1
    }

    deinit { finish() }
}
