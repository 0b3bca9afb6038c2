// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Storage
import Nu11Vault

/// `--tpm-pcrs 7` or `0,7`: the PCRs (SHA-256 bank) the TPM objects are bound to.
struct PCROption: ParsableArguments {
    @Option(name: .customLong("tpm-pcrs"),
            help: ArgumentHelp("Also bind the TPM objects to these PCRs (e.g. 7, the Secure Boot policy; comma-separated, 0–23). Off by default: a firmware or Secure Boot change then locks the TPM path until you use the recovery key.",
                               valueName: "list"))
    var pcrs: String?

    func validate() throws { _ = try mask() }

    func mask() throws -> UInt32 {
        guard let pcrs else { return 0 }
        var mask: UInt32 = 0
        for part in pcrs.split(separator: ",") {
            guard let n = Int(part.trimmingCharacters(in: .whitespaces)), (0...23).contains(n) else {
                throw ValidationError("--tpm-pcrs takes PCR numbers 0–23 separated by commas, e.g. 7 or 0,7 (got '\(part)')")
            }
            mask |= 1 << UInt32(n)
        }
        guard mask != 0 else { throw ValidationError("--tpm-pcrs names no PCR") }
        return mask
    }
}

/// The other PINs that must keep working through a change that re-seals every slot.
struct OtherPINsOption: ParsableArguments {
    @Option(name: .customLong("other-pins-fd"),
            help: ArgumentHelp("Read the other PINs that must keep working (backup, duress) from this descriptor, one per line, an empty line or the end for none.",
                               valueName: "k"))
    var otherPinsFD: Int32?

    func validate() throws {
        if let fd = otherPinsFD, fd < 0 { throw ValidationError("--other-pins-fd must be a file descriptor number") }
    }

    func read(_ change: String) throws -> [SecretBytes] {
        try readOtherPINs(fd: otherPinsFD, why: "\(change) re-seals every PIN of this key store.",
                          refusal: "\(change.lowercased()) re-seals every PIN of this key store, and there is no terminal to ask for the others; nothing was changed")
    }
}
