// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Fuzz

// A developer tool, not part of the product. Built by `make fuzz` (-sanitize=fuzzer, -D
// FUZZING) it runs libFuzzer on the harness named by NU11VLT_FUZZ_HARNESS (n11, keystore,
// settings, archive); built normally it replays a corpus folder.

#if FUZZING
nonisolated(unsafe) var harness = "n11"

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzEntries.run(harness, Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(_ argc: UnsafeMutablePointer<CInt>,
               _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
               _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

@main
struct FuzzDriver {
    static func main() {
        harness = ProcessInfo.processInfo.environment["NU11VLT_FUZZ_HARNESS"] ?? "n11"
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runDriver(&argc, &argv, fuzzOne))
    }
}
#else
@main
struct ReplayCorpus {
    /// `nu11vlt-fuzz HARNESS CORPUS-FOLDER` replays a corpus through a harness.
    static func main() {
        let args = CommandLine.arguments
        guard args.count == 3, FuzzEntries.harnesses.contains(args[1]) else {
            FileHandle.standardError.write(Data("usage: nu11vlt-fuzz n11|keystore|settings|archive CORPUS-FOLDER\n".utf8))
            exit(64)
        }
        print("replayed \(FuzzEntries.replay(args[1], folder: args[2]).count) inputs")
    }
}
#endif
