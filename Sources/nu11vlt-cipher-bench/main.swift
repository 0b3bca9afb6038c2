// SPDX-License-Identifier: GPL-3.0-or-later
// Measures the chunk-cipher candidates (bench/run's cipher rows): one core, 16 KiB chunks,
// sealing between reusable buffers, the best of three passes. Prints
// `candidate<TAB>algorithm<TAB>MB/s`, one line each, and which one the content path uses.
import Foundation
import Nu11CipherBench
import Nu11Format

let megabytes = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 512
for algorithm in CipherCandidate.Algorithm.allCases {
    for candidate in CipherCandidate.allCases where candidate.supports(algorithm) {
        do {
            let speed = try candidate.measure(algorithm, megabytes: megabytes)
            print("\(candidate.rawValue)\t\(algorithm.rawValue)\t\(Int(speed.rounded()))")
        } catch {
            FileHandle.standardError.write(Data("nu11vlt-cipher-bench: \(candidate.rawValue): \(error)\n".utf8))
            exit(1)
        }
    }
}
print("in use\t\(cipherBackendDescription)")
