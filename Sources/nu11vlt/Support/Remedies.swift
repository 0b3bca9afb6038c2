// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format
import Nu11Vault

/// The command line's words for the core's typed remedies: the one place that knows which
/// command or flag does what the core advises.
enum Remedies {
    static func text(_ remedy: Remedy) -> String {
        switch remedy {
        case .advice(let advice): advice.description
        case .frontEnd(let text): text
        case .createVault: "run `nu11vlt init`"
        case .createVaultOrPointAtIt: "run `nu11vlt init`, or pass --vault/--keystore with the right folders"
        case .createVaultOrPointAtKeyStore: "run `nu11vlt init`, or point --keystore at the right folder"
        case .checkFolders: "check --vault and --keystore"
        case .pairedFolders: "pass the --vault and --keystore (or NU11VLT_VAULT and NU11VLT_KEYSTORE) that were created together"
        case .separateFolders: "choose separate folders for --vault and --keystore"
        case .otherVaultFolder: "use another --vault folder"
        case .otherKeyStore: "use another --keystore: this one belongs to another vault (`nu11vlt status --keystore DIR` shows which)"
        case .nothingRecoverable: "nothing can be recovered; create a new vault with `nu11vlt init`"
        case .check(let reason): (reason.map { $0 + "; " } ?? "") + "run `nu11vlt check`"
        case .repair: "run `nu11vlt check --repair`"
        case .listIDs: "see `nu11vlt list` for IDs (a unique prefix of 4 or more hex digits is enough)"
        case .listAlbums: "see `nu11vlt album list`, or create it with `nu11vlt album create`"
        case .otherOutputOrForce: "choose another -o path or pass --force"
        case .lowerKDFMemory: "free memory or choose a lower --kdf-memory"
        case .unlockAgain: "run the command again and enter the PIN"
        case .primaryPINForCostChange: "give the primary PIN as one of the other PINs, or run `pin change` with the primary PIN"
        case .duressNeedsBackupPIN: "run `nu11vlt pin set-duress` with the backup PIN as the current PIN"
        case .exportFileNotNote: "use `nu11vlt export`"
        case .fadeOrAlbum: "drop --album or --fade"
        case .portableArchive: "export a --portable archive to move items between machines"
        case .importFolderRecursively: "pass -r to import folders recursively"
        case .importThroughStandardInput: "copy it to a regular file first, or pipe it to `nu11vlt import -`"
        case .makeThumbnails: "run `nu11vlt thumbnails --missing` (only images get one)"
        case .recoverBesideKeyStore: "give a new folder with --keystore (e.g. --keystore ~/nu11vlt-recovered); the existing key store is kept as it is"
        case .pointAtRestoredVault: "point --vault at the vault folder (for example as restored with `restic restore`)"
        case .noRecoveryData: "open the vault with its PIN and key store and run `nu11vlt recovery setup`"
        case .clearTPMLockout: "wait, or clear the count now with your recovery key and the primary PIN: `nu11vlt tpm recover`"
        case .recoverWithRecoveryKey(let first):
            (first.map { $0 + "; or " } ?? "") + "open the vault with your recovery key and the primary PIN: `nu11vlt tpm recover` (it enrols this machine's TPM again)"
        case .tpmStatus: "see `nu11vlt tpm status`"
        case .disarmSkeletonToEnrol: "disarm it (`nu11vlt skeleton disable`), enrol the TPM, then arm it again: the TPM then enforces it too"
        case .armSkeletonFirst: "arm it first (`nu11vlt skeleton enable`)"
        case .disarmSkeletonFirst: "disarm it first (`nu11vlt skeleton disable`)"
        case .changeOnePINThenEnrol: "change one of them (`nu11vlt pin change`), then enrol again"
        case .removeTPMToChangeCost: "remove the TPM enrolment (`nu11vlt tpm remove`), change the cost, then enrol again"
        case .removeSecurityKeyFirst: "remove one first (`nu11vlt fido2 status` lists them, `nu11vlt fido2 remove N`)"
        case .useEnrolledSecurityKeyOrPIN: "plug in a security key enrolled in this vault (`nu11vlt fido2 status`), or unlock with the PIN"
        case .giveArchiveFile: "give a .nu11vlt file made by `nu11vlt archive export`"
        case .moveAwayOrOtherFolder: "move it away, or choose another --vault/--keystore"
        case .pipeContentIn: "pipe the content in, e.g. `cat FILE | nu11vlt import --name NAME -`"
        case .finishContentRekey: "run `nu11vlt rekey --content` again to finish it"
        case .newRecoveryPhrase: "run `nu11vlt recovery setup` for a new phrase"
        case .upgrade: "upgrade nu11vlt (`nu11vlt --version` says which version this is)"
        case .restoreKeyStore: "restore the key store folder from your own copy (or rebuild it: `nu11vlt recover`)"
        case .otherPIN: "choose a different PIN"
        case .longerPIN: "use at least 4 characters"
        case .primaryPINOnly: "run it again with the primary PIN"
        case .freeDiskSpace: "free some disk space and try again"
        case .exportWithoutStripping: "export without --strip-location (and `settings set export.strip_location false`), or convert it first (a photo to JPEG; a video with a tool that drops its metadata)"
        case .findMovedKeyStore: "if the key store was moved, find it with `nu11vlt status --search ~` (it carries this vault's ID) and point --keystore at it; else restore it from your own copy"
        case .findMovedVault: "if the vault folder was moved, find it with `nu11vlt status --search ~` (it carries this vault's ID; the key store then remembers where it is); else restore it from your own copy"
        case .pointAtPresentHalf: "point --vault and --keystore at the half you have, then search for the other"
        case .pointAtMovedHalf: "point --vault or --keystore at the folder you moved it to"
        case .confirmHalfWipe: "find the other half with `nu11vlt status --search ~` and point --vault or --keystore at it; to destroy this half anyway, give its vault ID to --i-know"
        case .renameToUTF8: "rename it to UTF-8 (e.g. convmv -f latin1 -t utf8), or import it with `nu11vlt import --name NAME - < FILE`"
        }
    }

    /// The error as one line: what failed, then the hint in the command line's words.
    static func line(_ error: Nu11Error) -> String { line(error.message, error.remedy) }

    /// A notice as one line, the same way.
    static func line(_ notice: Notice) -> String { line(notice.message, notice.remedy) }

    private static func line(_ message: String, _ remedy: Remedy?) -> String {
        guard let remedy else { return message }
        return "\(message) (hint: \(text(remedy)))"
    }
}
