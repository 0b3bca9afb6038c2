// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Rebuild the key store from the vault folder and the recovery phrase, under a new PIN.",
        discussion: """
            For a dead disk, a lost key store or a forgotten PIN. Point --vault at the vault folder \
            (for example as restored by `restic restore`) and --keystore at a folder that holds no key \
            store: an existing key store is never touched. Asks for the phrase, then the new PIN twice. \
            The backup and duress PINs, the settings and Fade items are not recovered.
            """)
    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Option(name: .customLong("phrase-fd"),
            help: ArgumentHelp("Read the recovery phrase from this file descriptor (one line) instead of the terminal.", valueName: "n"))
    var phraseFD: Int32?
    @OptionGroup var kdf: KDFOptions
    @Flag(name: .long, help: "Bind the rebuilt key store to this machine's TPM 2.0; the phrase stays its recovery key.")
    var tpm = false
    @OptionGroup var pcr: PCROption
    @OptionGroup var output: JSONOption

    func validate() throws {
        if pcr.pcrs != nil && !tpm { throw ValidationError("--tpm-pcrs needs --tpm") }
        if let fd = phraseFD, fd < 0 { throw ValidationError("--phrase-fd must be a file descriptor number") }
    }

    func run() throws {
        try Failure.run {
            let loc = location.location
            let typed = try PINReader.read(prompt: "Recovery phrase: ", from: phraseFD.map { .fd($0) } ?? .terminal)
            let phrase = try RecoveryKey.parse(typed)
            let secret = try PINReader.readNew(prompt: "New PIN or passphrase: ", from: pin.source)
            let parameters = try kdf.parameters()
            let report: RecoveryReport
            do {
                report = try LockedVault(loc).recover(phrase: phrase, pin: secret, parameters: parameters)
            } catch let error as Nu11Error where error.tookEffect && LockedVault(loc).presence == .complete {
                // The rebuilt key store was renamed into place and only the fsync that makes the
                // rename durable failed: it opens with the new PIN, so this is done (a retry
                // would be refused: a key store exists).
                Output.note("nu11vlt: warning: done, but the rebuilt key store may not survive a power cut yet (\(Output.escaped(error.message))); `nu11vlt check` shows what it opens")
                if !output.json { print("key store rebuilt at \(loc.keyStoreRoot); the new PIN opens the vault; set a backup or duress PIN again if you had one") }
                if tpm {
                    Output.note("nu11vlt: warning: the key store was rebuilt but not bound to the TPM; run `nu11vlt tpm enroll` to bind it")
                    throw ExitCode(74)
                }
                return
            }
            if !tpm, let warning = Strength.pinWarning(secret, parameters: parameters) { Output.note("nu11vlt: " + warning) }
            var tpmNote: String?
            if tpm {
                do {
                    let vault = try LockedVault(loc).unlock(pin: secret)
                    defer { vault.lock() }
                    _ = try vault.profiles.enrollTPM(others: [], pin: secret, pcrMask: pcr.mask(), recoveryKey: phrase)
                } catch {
                    // The key store is rebuilt and opens with the new PIN; only the binding failed.
                    tpmNote = "the key store was rebuilt but not bound to the TPM (\(Remedies.line(error as? Nu11Error ?? Nu11Error(.tpm, "\(error)"))))"
                }
            }
            if output.json {
                try Output.json(report)
            } else {
                print("key store rebuilt at \(loc.keyStoreRoot): \(report.recovered) item(s) recovered\(tpm && tpmNote == nil ? "; bound to this machine's TPM" : "")")
                for line in report.unrecoveredLines { Output.note("nu11vlt: warning: " + line) }
                if let unfinished = report.unfinished { Output.note("nu11vlt: warning: \(unfinished)") }
                if let problem = report.recoveryDataNotUsed {
                    Output.note("nu11vlt: warning: the vault folder's recovery data (recovery.n11r) \(problem): it was not used; the items' seals opened with the phrase alone, their names came from their sidecars, and new recovery data was written")
                }
                if report.rowsFromSidecars > 0 && report.indexRebuilt == nil {
                    print("\(report.rowsFromSidecars) index entr\(report.rowsFromSidecars == 1 ? "y" : "ies") rebuilt from the items' sidecars (each under its item's own key)")
                }
                for line in report.nameLines { Output.note("nu11vlt: warning: " + line) }
                if report.archiveKeysNotKept {
                    print("secure archives made before this recovery do not import into the rebuilt key store (the recovery data's archive key is not kept: nothing in the folder vouches for it); portable archives do")
                }
                if let rows = report.indexRebuilt {
                    print("the vault folder's index was lost or damaged: set aside, and rebuilt from the folder (\(rows) item(s) listed again; new keys were made, and the phrase covers them)")
                }
            }
            if let tpmNote {
                Output.note("nu11vlt: warning: " + tpmNote + "; run `nu11vlt tpm enroll` to bind it")
                throw ExitCode(74)
            }
            if output.json { return }
            if report.notCovered > 0 {
                print("\(report.notCovered) item(s) are not covered by the phrase (Fade, the backup vault, or added before the phrase): `nu11vlt check` lists them")
            }
            print("the new PIN opens the vault; set a backup or duress PIN again if you had one")
        }
    }
}
