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
        case .advice(let text): text
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
        case .disarmSkeletonFirst: "turn the Skeleton Switch off first (Settings)"
        case .changeOnePINThenEnrol: "change one of the PINs, then enrol again"
        case .removeTPMToChangeCost: "remove the TPM enrolment, change the cost, then enrol again"
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
}
