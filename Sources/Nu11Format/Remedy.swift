// SPDX-License-Identifier: GPL-3.0-or-later
/// How to remedy an error, typed so that each front end (the command line, the desktop
/// app) words it in its own terms: the core names no command and no flag. `advice` is
/// for remedies that need no front end's words ("wait", "check the path"), themselves a
/// closed set (`Advice`): the core writes no free text.
public enum Remedy: Sendable, Equatable, CustomStringConvertible {
    case advice(Advice)
    /// A front end's own words for its own error (the command line naming its flags). The
    /// core never builds one: `SourceHygieneTests` rejects it in Format, Storage, Media and Vault.
    case frontEnd(String)
    /// No vault here yet: create one.
    case createVault
    /// The vault's folders were probably given wrongly, or it was never created.
    case createVaultOrPointAtIt
    /// The key store folder was probably given wrongly, or it was never created.
    case createVaultOrPointAtKeyStore
    /// Give the vault folder and key store folder that belong together.
    case checkFolders
    /// The vault and key store given were not created together.
    case pairedFolders
    /// The vault folder and the key store folder must not nest.
    case separateFolders
    case otherVaultFolder
    case otherKeyStore
    /// The Skeleton Switch wiped the vault.
    case nothingRecoverable
    /// Run the integrity check, after `reason` when there is one.
    case check(reason: String?)
    /// Run the integrity check with repair.
    case repair
    /// Take the ID from the listing.
    case listIDs
    /// Take the album name from the album listing, or create the album.
    case listAlbums
    case otherOutputOrForce
    case lowerKDFMemory
    case unlockAgain
    case primaryPINForCostChange
    case duressNeedsBackupPIN
    case exportFileNotNote
    case fadeOrAlbum
    case portableArchive
    case importFolderRecursively
    case importThroughStandardInput
    case renameToUTF8
    /// Half a vault: the other half was probably moved; find it by the vault ID.
    case findMovedKeyStore
    case findMovedVault
    /// Searching for a moved half needs the half that is here.
    case pointAtPresentHalf
    /// A half without a vault ID: give its other half's folder.
    case pointAtMovedHalf
    /// Wiping half a vault: find the other half first, or confirm with the vault ID.
    case confirmHalfWipe
    /// Make the thumbnails of photos imported before thumbnails existed.
    case makeThumbnails
    /// Export without location stripping, or convert the photo (or video) first.
    case exportWithoutStripping
    /// Recovery builds a new key store: give a folder that holds none.
    case recoverBesideKeyStore
    /// Recovery needs the vault folder (e.g. restored from a backup).
    case pointAtRestoredVault
    /// The vault folder carries no recovery data.
    case noRecoveryData
    /// The TPM locked out wrong PINs; this key store holds its lockout authorization.
    case clearTPMLockout
    /// The TPM cannot give the key store's secrets (another machine, cleared, changed, absent):
    /// `first` (when there is one), or open the vault with the recovery key, which enrols this
    /// machine's TPM again.
    case recoverWithRecoveryKey(first: String?)
    /// The key store is bound to a TPM already: see its status.
    case tpmStatus
    /// Enrolling a TPM while the Skeleton Switch is armed: disarm, enrol, arm again.
    case disarmSkeletonToEnrol
    /// The Skeleton Switch is off: arm it first.
    case armSkeletonFirst
    /// The Skeleton Switch is armed: disarm it first.
    case disarmSkeletonFirst
    /// Two PINs fall in the same TPM bucket: change one of them, then enrol again.
    case changeOnePINThenEnrol
    /// The KDF cost of a TPM-bound key store: remove the enrolment, change the cost, enrol again.
    case removeTPMToChangeCost
    /// Every security-key entry is taken: remove one first.
    case removeSecurityKeyFirst
    /// A security key unlock failed: plug in an enrolled key, or unlock with the PIN.
    case useEnrolledSecurityKeyOrPIN
    /// Not an archive: give a file that an archive export made.
    case giveArchiveFile
    /// A file or symlink where a vault or key store folder should be.
    case moveAwayOrOtherFolder
    /// Standard input was empty: send the content through it.
    case pipeContentIn
    /// An interrupted content re-encryption: run it again to finish it.
    case finishContentRekey
    /// The recovery phrase does not cover new items: make a new one.
    case newRecoveryPhrase
    /// A newer version wrote this file: upgrade the program.
    case upgrade
    /// The key store is gone or damaged: restore it from the user's own copy.
    case restoreKeyStore
    /// The PIN is already taken (by another slot) or refused: choose another.
    case otherPIN
    /// The PIN or passphrase is shorter than the minimum (4 characters).
    case longerPIN
    /// Only the primary PIN may do this.
    case primaryPINOnly
    /// The disk is full.
    case freeDiskSpace

    /// Plain words, for front ends that have no names of their own.
    public var description: String {
        switch self {
        case .advice(let advice): advice.description
        case .frontEnd(let text): text
        case .createVault: "create a vault first"
        case .createVaultOrPointAtIt: "create a vault, or give the right vault and key store folders"
        case .createVaultOrPointAtKeyStore: "create a vault, or give the right key store folder"
        case .checkFolders: "check the vault and key store folders"
        case .pairedFolders: "give the vault and key store folders that were created together"
        case .separateFolders: "choose separate folders for the vault and the key store"
        case .otherVaultFolder: "choose another vault folder"
        case .otherKeyStore: "choose another key store folder: this one belongs to another vault"
        case .nothingRecoverable: "nothing can be recovered; create a new vault"
        case .check(let reason): (reason.map { $0 + "; " } ?? "") + "run the integrity check"
        case .repair: "run the integrity check with repair"
        case .removeSecurityKeyFirst: "remove one of the enrolled security keys first"
        case .useEnrolledSecurityKeyOrPIN: "use a security key enrolled in this vault, or unlock with the PIN"
        case .listIDs: "copy the ID from the item list"
        case .listAlbums: "see the album list, or create the album"
        case .otherOutputOrForce: "choose another output path, or allow overwriting"
        case .lowerKDFMemory: "free memory or choose a lower KDF memory cost"
        case .unlockAgain: "unlock the vault again"
        case .primaryPINForCostChange: "give the primary PIN as one of the other PINs, or change the PIN with the primary PIN"
        case .duressNeedsBackupPIN: "set the duress PIN with the backup PIN as the current PIN"
        case .exportFileNotNote: "export it as a file"
        case .recoverBesideKeyStore: "choose an empty or new key store folder; the existing one is kept as it is"
        case .pointAtRestoredVault: "point at the vault folder (for example as restored from a backup)"
        case .noRecoveryData: "open the vault with its PIN and key store, then make a recovery phrase"
        case .clearTPMLockout: "wait, or clear the count now with your recovery key and the primary PIN (TPM recovery)"
        case .recoverWithRecoveryKey(let first):
            (first.map { $0 + "; or " } ?? "") + "open the vault with your recovery key and the primary PIN (TPM recovery), which enrols this machine's TPM again"
        case .tpmStatus: "see the TPM's status"
        case .disarmSkeletonToEnrol: "disarm the Skeleton Switch, enrol the TPM, then arm it again: the TPM then enforces it too"
        case .armSkeletonFirst: "arm the Skeleton Switch first"
        case .disarmSkeletonFirst: "disarm the Skeleton Switch first"
        case .changeOnePINThenEnrol: "change one of them, then enrol again"
        case .removeTPMToChangeCost: "remove the TPM enrolment, change the cost, then enrol again"
        case .giveArchiveFile: "give a .nu11vlt file made by an archive export"
        case .moveAwayOrOtherFolder: "move it away, or choose other vault and key store folders"
        case .pipeContentIn: "send the content through standard input"
        case .finishContentRekey: "run the content re-encryption again to finish it"
        case .newRecoveryPhrase: "make a new recovery phrase"
        case .upgrade: "upgrade to a newer version of Nu11VLT"
        case .restoreKeyStore: "restore the key store folder from your own copy"
        case .otherPIN: "choose a different PIN"
        case .longerPIN: "use at least 4 characters"
        case .primaryPINOnly: "unlock with the primary PIN"
        case .freeDiskSpace: "free some disk space and try again"
        case .fadeOrAlbum: "choose an album or a fade time, not both"
        case .portableArchive: "export a portable (password) archive to move items between machines"
        case .importFolderRecursively: "import folders recursively"
        case .importThroughStandardInput: "copy it to a regular file first, or import it from standard input"
        case .makeThumbnails: "make the missing thumbnails (only images get one)"
        case .exportWithoutStripping: "export without removing the location, or convert it first (a photo to JPEG; a video with a tool that drops its metadata)"
        case .findMovedKeyStore: "if the key store was moved, find it by this vault's ID and open the vault with its folder; else restore it from your own copy"
        case .findMovedVault: "if the vault folder was moved, find it by this vault's ID and open it from there; else restore it from your own copy"
        case .pointAtPresentHalf: "give the folder of the half you have, then search for the other"
        case .pointAtMovedHalf: "give the folder you moved the other half to"
        case .confirmHalfWipe: "find the other half first and give both folders; to destroy this half anyway, confirm with its vault ID"
        case .renameToUTF8: "rename it to UTF-8 (e.g. convmv -f latin1 -t utf8), or import it from standard input under a name"
        }
    }
}
