import Foundation
import Nu11Fuzz

// libFuzzer entry (built by `make fuzz` with -sanitize=fuzzer and -D FUZZING); the harness is
// chosen by NU11VLT_FUZZ_HARNESS (n11, keystore, settings, archive). This is a developer
// tool, not part of the product.
#if FUZZING
let harness = ProcessInfo.processInfo.environment["NU11VLT_FUZZ_HARNESS"] ?? "n11"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzEntries.run(harness, Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
#else
@main
struct ReplayCorpus {
    /// Without libFuzzer: `nu11vlt-fuzz HARNESS CORPUS-FOLDER` replays a corpus.
    static func main() {
        let args = CommandLine.arguments
        guard args.count == 3, FuzzEntries.harnesses.contains(args[1]) else {
            FileHandle.standardError.write(Data("usage: nu11vlt-fuzz n11|keystore|settings|archive CORPUS-FOLDER\n".utf8))
            exit(64)
        }
        print("replayed \(FuzzEntries.replay(args[1], folder: args[2])) inputs")
    }
}
#endif
