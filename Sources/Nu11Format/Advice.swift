// SPDX-License-Identifier: GPL-3.0-or-later
/// Remedies that name no control of any front end (no command, no flag, no menu): what to do
/// with a damaged file, a full disk, a wrong path. The core words them once, here; a front end
/// shows `description` as it is. Anything a front end would word in its own terms (a command,
/// a dialog) is a case of `Remedy` instead. A closed set: the core never writes free text.
public enum Advice: Sendable, Equatable, CustomStringConvertible {
    // Files that are damaged, cut short, foreign or hostile.
    case damaged
    case damagedOrForeign
    case truncated
    case wrongFile
    case changedWhileReading
    case untrusted
    case keepLogAsEvidence
    case keepLogAsEvidenceNewLogStarts
    case restoreRecoveryRecord
    // Paths, permissions and the file system.
    case checkPath
    case checkFolder
    case checkPermissions
    case checkFileSystem
    case checkDisk
    case moveAway
    case writableVault
    case removeLeftovers
    // Waiting and trying again.
    case tryAgain
    case waitForOtherProgram
    case waitForWriter
    case waitGrowingDelay
    case waitTPMCounts
    // The installation.
    case reinstallOpenSSL
    case reinstallSodium
    // Nothing to do.
    case nothingToDo
    case hardwareSwitchIsFinal
    // PINs, phrases and recovery keys.
    case otherPINsOnce
    case unlockWithPIN
    case otherSecurityKey
    case touchSecurityKey
    case securityKeyPIN(triesLeft: Int)
    case securityKeyPINBlocked
    case unlockWithBackupPIN
    case otherVaultsPIN
    case exportPassword
    case typeRecoveryPhrase
    case uncommonPIN
    case typeTPMRecoveryKey
    case tpmLockoutRecoveryKey
    case tpmLockoutOwnedElsewhere
    case eraseAfter(failures: Int)
    // Values.
    case kdfFloor(passes: Int, memoryMiB: Int)
    case durationFormat
    case validDateRange
    case shorterDuration
    case positiveNumber
    case allowedValues(String)
    case knownSettings([String])
    case splitInput
    case importAsFile
    case validTitle
    case validAlbumName
    case otherName
    case idFromPreviousPage
    case longerIDPrefix
    case nothingToCancel
    case onlyPhotosRotate
    case rotateBackToExport
    case searchOtherFolder
    case logStartsAtUnlock
    case tctiSyntax
    case localTPMOnly
    // age files (sharing).
    case ageDamaged
    case ageRecipientFormat
    case ageOtherRecipient
    // Devices (issue 60).
    case typePairingCode
    case newPairingCode
    case pairAgain
    case restoreSharedRecoveryData

    public var description: String {
        switch self {
        case .damaged: "the file was altered or damaged; restore it from your own copy"
        case .damagedOrForeign: "the file is damaged or was not made by Nu11VLT"
        case .ageDamaged: "the file is damaged, cut short or not an age file; ask the sender for it again"
        case .ageRecipientFormat:
            "a recipient is age1… (X25519) or age1pq1… (post-quantum); an identity is AGE-SECRET-KEY-1… or AGE-SECRET-KEY-PQ-1…"
        case .ageOtherRecipient: "it was encrypted to someone else: ask the sender to encrypt it to one of your recipients"
        case .truncated: "the file was cut short; restore it from your own copy"
        case .wrongFile: "the file belongs elsewhere or was altered"
        case .changedWhileReading: "the file changed while being read; try again"
        case .untrusted: "the file may be hostile: do not use files from untrusted sources"
        case .keepLogAsEvidence: "keep this copy as evidence; the log cannot vouch for what it holds"
        case .keepLogAsEvidenceNewLogStarts: "keep this copy as evidence; the next entry starts a new log"
        case .restoreRecoveryRecord: "restore recovery.n11r from a backup of the vault folder"
        case .checkPath: "check the path"
        case .checkFolder: "check the folder and its permissions"
        case .checkPermissions: "check the permissions of the file and its folder"
        case .checkFileSystem: "check the file system"
        case .checkDisk: "free some disk space, check the disk, and try again"
        case .moveAway: "move it away and try again"
        case .writableVault: "do this where the vault folder is writable (not on a read-only copy)"
        case .removeLeftovers: "remove what is left by hand; the keys are gone, so what is left cannot be decrypted"
        case .tryAgain: "try again"
        case .waitForOtherProgram: "wait for the other Nu11VLT program to finish"
        case .waitForWriter: "try again once nothing else is writing the file"
        case .waitGrowingDelay: "wait; the delay grows with every wrong PIN"
        case .waitTPMCounts: "wait; the TPM counts wrong PINs itself, across programs and restarts"
        case .reinstallOpenSSL: "check that OpenSSL 3 (libcrypto) is installed correctly"
        case .reinstallSodium: "check that libsodium is installed correctly"
        case .nothingToDo: "nothing needs to be done"
        case .hardwareSwitchIsFinal: "nothing else can open it; that is what the hardware switch is for"
        case .otherPINsOnce: "give each other PIN (backup, duress) once, exactly as it is"
        case .unlockWithPIN: "unlock with the PIN as usual"
        case .otherSecurityKey: "use another security key"
        case .touchSecurityKey: "touch the security key when it blinks (within 30 seconds), or unlock with the PIN"
        case .securityKeyPIN(let left): "type the security key's own PIN (\(left) tries left before the key blocks it), or unlock with the PIN"
        case .securityKeyPINBlocked: "the key's own PIN is blocked until the key is reset, which ends its enrolment here; unlock with the PIN"
        case .unlockWithBackupPIN: "unlock with the backup PIN"
        case .otherVaultsPIN: "unlock with that vault's PIN"
        case .exportPassword: "try again with the password used for the export"
        case .uncommonPIN: "choose another: 6 or more digits without a pattern, or a passphrase of a few random words"
        case .typeRecoveryPhrase: "type the phrase shown when this vault was made (8 groups of 4 letters); dashes and spaces do not matter"
        case .typeTPMRecoveryKey: "type the recovery key shown when the TPM was enrolled (8 groups of 4 letters); dashes and spaces do not matter"
        case .tpmLockoutRecoveryKey: "type the recovery key of the vault that was bound to this TPM; if it was set by another program, that program's owner must clear it"
        case .tpmLockoutOwnedElsewhere:
            "use a passphrase of 4 or more random words instead of a PIN, or ask whoever set the TPM's lockout authorization to clear it (tpm2_changeauth -c lockout -p <theirs>)"
        case .eraseAfter(let failures): "the erase-after setting was \(failures)"
        case .kdfFloor(let passes, let memoryMiB): "use at least \(passes) passes and \(memoryMiB) MiB"
        case .durationFormat: "write a whole number and a unit: 30s, 10m, 24h, 7d or 2w"
        case .validDateRange: "give the earlier date first"
        case .shorterDuration: "choose a shorter duration"
        case .positiveNumber: "give a positive number"
        case .allowedValues(let allowed): "allowed: \(allowed)"
        case .knownSettings(let keys): "known: " + keys.joined(separator: ", ")
        case .splitInput: "split the input into smaller items"
        case .importAsFile: "import it as a file instead"
        case .validTitle: "use up to 1024 bytes of text without control characters"
        case .validAlbumName: "use 1–255 bytes of text without control characters or surrounding spaces"
        case .otherName: "choose another name"
        case .idFromPreviousPage: "copy the ID from the previous page"
        case .longerIDPrefix: "give more digits of the ID"
        case .nothingToCancel: "nothing to cancel"
        case .onlyPhotosRotate: "give the ID of a photo (an image); videos, notes and other files keep their orientation"
        case .rotateBackToExport: "turn it back to its own orientation to export it as stored"
        case .searchOtherFolder: "search a folder you may have moved it into, e.g. your home folder"
        case .logStartsAtUnlock: "it starts with the next unlock of the vault"
        case .tctiSyntax: "use device:/dev/tpmrm0, swtpm:…, mssim:… or tabrmd:…, or unset it"
        case .typePairingCode: "type the code the first device showed (8 groups of 4 letters); dashes and spaces do not matter"
        case .newPairingCode: "make a new pairing code (device pair) on a device that already opens the vault, and let the folder sync"
        case .pairAgain: "another device made new keys (a PIN change, `rekey` or a new recovery phrase there): what it adds since opens only there until devices share key changes (docs/FORMAT.md § 9.6)"
        case .restoreSharedRecoveryData: "restore recovery.n11r from a backup of the vault folder; on a vault shared with other devices, `recovery setup` here would make new keys the other devices do not get yet (docs/FORMAT.md § 9.6)"
        case .localTPMOnly: "use the local TPM (unset NU11VLT_TPM_TCTI), a Unix socket (swtpm:path=…) or a loopback simulator"
        }
    }
}
