// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// What the desktop app tells a person, in its own words: the core's remedies are typed
/// (`Remedy`), and the CLI words them in Support/Remedies.swift with its commands and flags;
/// here they name what this app shows (its menus, dialogs and settings), or plainly what to
/// do where the app has no control for it yet. No default case: a new remedy must be worded.
enum Words {
    static func describe(_ error: any Error) -> String {
        guard let e = error as? Nu11Error else { return "\(error)" }
        guard let remedy = e.remedy else { return e.message }
        return e.message + " — " + Words.remedy(remedy)
    }

    static func remedy(_ remedy: Remedy) -> String {
        switch remedy {
        case .advice(let advice): Words.advice(advice)
        case .frontEnd(let text): text
        case .createVault: "create a vault first"
        case .createVaultOrPointAtIt: "create a vault, or open the folders where yours is"
        case .createVaultOrPointAtKeyStore: "create a vault, or open it with the right key store folder"
        case .checkFolders: "check that the vault folder and the key store folder are the right ones"
        case .pairedFolders: "open the vault folder with the key store it was created with"
        case .separateFolders: "choose separate folders for the vault and the key store"
        case .otherVaultFolder: "choose another vault folder"
        case .otherKeyStore: "choose another key store folder: this one belongs to another vault"
        case .nothingRecoverable: "nothing can be recovered; create a new vault"
        case .check(let reason): (reason.map { $0 + "; " } ?? "") + "run the integrity check"
        case .repair: "run the integrity check and let it repair what it can"
        case .listIDs: "pick the item in the gallery again"
        case .listAlbums: "pick an album from the sidebar, or create it"
        case .otherOutputOrForce: "choose another file name, or allow replacing the file"
        case .lowerKDFMemory: "close other programs, or lower the key derivation memory in Settings"
        case .unlockAgain: "unlock the vault again"
        case .primaryPINForCostChange: "change the key derivation cost while unlocked with the primary PIN"
        case .duressNeedsBackupPIN: "set the duress PIN while unlocked with the backup PIN"
        case .exportFileNotNote: "export it from the gallery as a file"
        case .fadeOrAlbum: "choose an album or a fade time, not both"
        case .portableArchive: "export a portable archive (with a password) to move items to another machine"
        case .importFolderRecursively: "choose the folder itself to import everything in it"
        case .importThroughStandardInput: "copy it to a regular file first, then import that"
        case .renameToUTF8: "rename the file so that its name is UTF-8 text, then import it"
        case .findMovedKeyStore: "if the key store was moved, open the vault with its new folder; else restore it from your own copy"
        case .findMovedVault: "if the vault folder was moved, open it from its new place; else restore it from your own copy"
        case .pointAtPresentHalf: "open the folder of the half you have, then look for the other"
        case .pointAtMovedHalf: "open the folder you moved the other half to"
        case .confirmHalfWipe: "find the other half first; this half is kept as it is"
        case .makeThumbnails: "make the missing thumbnails (only images get one)"
        case .exportWithoutStripping: "export it with its location, or convert the photo to JPEG first"
        case .recoverBesideKeyStore: "choose an empty or new key store folder; the existing one is kept as it is"
        case .pointAtRestoredVault: "open the vault folder (for example as restored from a backup)"
        case .noRecoveryData: "unlock the vault with its PIN, then make a recovery phrase"
        case .clearTPMLockout: "wait, or clear the count with your recovery key and the primary PIN (TPM recovery)"
        case .recoverWithRecoveryKey(let first):
            (first.map { $0 + "; or " } ?? "") + "open the vault with your recovery key and the primary PIN (TPM recovery), which enrols this machine's TPM again"
        case .tpmStatus: "see the TPM's status"
        case .disarmSkeletonToEnrol: "turn the Skeleton Switch off, enrol the TPM, then turn it on again: the TPM then enforces it too"
        case .armSkeletonFirst: "turn the Skeleton Switch on first (Settings)"
        case .disarmSkeletonFirst: "turn the Skeleton Switch off first (Settings)"
        case .changeOnePINThenEnrol: "change one of the PINs, then enrol again"
        case .removeTPMToChangeCost: "remove the TPM enrolment, change the cost, then enrol again"
        case .removeSecurityKeyFirst: "remove one of them first (Settings, Security keys)"
        case .useEnrolledSecurityKeyOrPIN: "plug in a security key set up for this vault, or unlock with the PIN"
        case .giveArchiveFile: "choose a .nu11vlt archive file"
        case .moveAwayOrOtherFolder: "move it away, or choose other vault and key store folders"
        case .pipeContentIn: "choose a file to import"
        case .finishContentRekey: "run the content re-encryption again to finish it"
        case .newRecoveryPhrase: "make a new recovery phrase"
        case .upgrade: "update Nu11VLT: a newer version wrote this file"
        case .restoreKeyStore: "restore the key store folder from your own copy"
        case .otherPIN: "choose a different PIN"
        case .longerPIN: "use at least 4 characters"
        case .primaryPINOnly: "lock, then unlock with the primary PIN"
        case .freeDiskSpace: "free some disk space and try again"
        }
    }

    /// The core's plain advice, as this app says it to someone who uses no terminal.
    static func advice(_ advice: Advice) -> String {
        switch advice {
        case .damaged: "the file was altered or damaged; restore it from your own copy"
        case .damagedOrForeign: "the file is damaged, or Nu11VLT did not make it"
        case .ageDamaged: "the shared file is damaged, cut short or not an age file; ask the sender for it again"
        case .ageRecipientFormat: "a recipient starts with age1pq1 (post-quantum) or age1 (classical)"
        case .ageOtherRecipient: "it was sent to someone else: ask the sender to send it to this vault's recipient"
        case .truncated: "the file is incomplete; restore it from your own copy"
        case .wrongFile: "the file belongs to another vault or was altered"
        case .changedWhileReading: "the file changed while it was being read; try again"
        case .untrusted: "the file may be hostile; do not open files from people you do not trust"
        case .keepLogAsEvidence: "keep this copy of the activity log as evidence; it cannot vouch for what it holds"
        case .keepLogAsEvidenceNewLogStarts: "keep this copy of the activity log as evidence; a new log starts now"
        case .restoreRecoveryRecord: "restore the file recovery.n11r from a backup of the vault folder"
        case .checkPath: "choose the file or folder again; it is not where it was"
        case .checkFolder: "choose another folder, or check that you may write to it"
        case .checkPermissions: "check that you may read and write the file and its folder"
        case .checkFileSystem: "check the disk the vault is on"
        case .checkDisk: "free some disk space, check the disk, and try again"
        case .moveAway: "move the file away, then try again"
        case .writableVault: "open the vault from a folder you may write to"
        case .removeLeftovers: "delete what is left in the folders yourself; without the keys it cannot be decrypted"
        case .tryAgain: "try again"
        case .waitForOtherProgram: "wait until the other Nu11VLT window or program is done"
        case .waitForWriter: "try again once nothing else is writing the file"
        case .waitGrowingDelay: "wait; each wrong PIN makes the wait longer"
        case .waitTPMCounts: "wait; the computer's security chip counts wrong PINs itself"
        case .reinstallOpenSSL: "reinstall Nu11VLT: its encryption library (OpenSSL 3) is missing or broken"
        case .reinstallSodium: "reinstall Nu11VLT: its key library (libsodium) is missing or broken"
        case .nothingToDo: "nothing needs to be done"
        case .hardwareSwitchIsFinal: "nothing else can open it; that is what the Skeleton Switch is for"
        case .otherPINsOnce: "type each other PIN (backup, duress) once, exactly as it is"
        case .unlockWithPIN: "unlock with the PIN as usual"
        case .otherSecurityKey: "use another security key"
        case .touchSecurityKey: "touch the security key when it blinks (within 30 seconds), or unlock with the PIN"
        case .securityKeyPIN(let left): "type the security key's own PIN (\(left) tries left before the key blocks it), or unlock with the PIN"
        case .securityKeyPINBlocked: "the key's own PIN is blocked until the key is reset; unlock with the PIN"
        case .unlockWithBackupPIN: "lock, then unlock with the backup PIN"
        case .otherVaultsPIN: "open the vault these items came from"
        case .exportPassword: "try again with the password the archive was made with"
        case .uncommonPIN: "choose another: 6 or more digits without a pattern, or a passphrase of a few random words"
        case .typeRecoveryPhrase: "type the recovery phrase shown when the vault was made (8 groups of 4 letters)"
        case .typeTPMRecoveryKey: "type the recovery key shown when the security chip was set up (8 groups of 4 letters)"
        case .tpmLockoutRecoveryKey: "type the recovery key of the vault that set up this security chip; if another program set it, ask its owner"
        case .tpmLockoutOwnedElsewhere: "use a passphrase of 4 or more random words instead of a PIN, or ask whoever set up the security chip to clear it"
        case .eraseAfter(let failures): "the vault is set to erase itself after \(failures) wrong PINs"
        case .kdfFloor(let passes, let memoryMiB): "choose at least \(passes) passes and \(memoryMiB) MiB"
        case .durationFormat: "write a number and a unit: 30s, 10m, 24h, 7d or 2w"
        case .validDateRange: "choose a start date before the end date"
        case .shorterDuration: "choose a shorter time"
        case .positiveNumber: "choose a number of 1 or more"
        case .allowedValues(let allowed): "choose one of: \(allowed)"
        case .knownSettings(let keys): "settings are: " + keys.joined(separator: ", ")
        case .splitInput: "split it into smaller files"
        case .importAsFile: "import it as a file instead"
        case .validTitle: "use a title of up to 1024 bytes, on one line"
        case .validAlbumName: "use a name of 1 to 255 bytes, on one line, without spaces at either end"
        case .otherName: "choose another name"
        case .idFromPreviousPage: "scroll back and pick the item again"
        case .longerIDPrefix: "pick the item in the gallery"
        case .nothingToCancel: "it is already kept for good"
        case .onlyPhotosRotate: "only photos turn; videos, notes and other files keep their orientation"
        case .rotateBackToExport: "rotate it back to how it was taken to export it as it is stored"
        case .searchOtherFolder: "look in a folder you may have moved it to, such as your home folder"
        case .logStartsAtUnlock: "it starts with the next unlock"
        case .tctiSyntax: "use the computer's own security chip"
        case .localTPMOnly: "use the computer's own security chip"
        }
    }
}
