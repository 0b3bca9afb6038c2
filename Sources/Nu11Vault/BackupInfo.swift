// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What `backup status` and `status` say about backups, without the PIN.
public struct BackupInfo: Sendable, Codable, Equatable {
    /// The trade-off of backing up the vault folder, in one sentence: what every front end
    /// says when a vault is created and asks whether its folder may be backed up.
    public static let tradeOff = "A backup of the vault folder holds only encrypted data, but a restored snapshot plus the recovery phrase brings back everything that was in it — including items you delete after that snapshot was made."

    /// Whether the vault folder carries its exclusion markers (CACHEDIR.TAG).
    public var excluded: Bool
    /// The last change a backup would need to copy (the index and recovery data record
    /// every commit).
    public var lastChange: Date?
    /// Whether the vault folder carries recovery data (recovery.n11r).
    public var hasRecoveryData: Bool
}

extension LockedVault {
    public func backupInfo() throws -> BackupInfo {
        guard isInitialized else {
            if let half = halfVaultError { throw half }
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: .createVaultOrPointAtIt, item: location.vaultRoot)
        }
        let paths = ["index.sqlite", "index.sqlite-wal", "recovery.n11r"].map { location.vaultRoot + "/" + $0 }
        let newest = paths.compactMap { path -> Double? in
            var st = stat()
            guard stat(path, &st) == 0, st.st_size > 0 else { return nil }
            return Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
        }.max()
        return BackupInfo(excluded: BackupExclusion.isExcluded(location.vaultRoot),
                          lastChange: newest.map { Date(timeIntervalSince1970: $0) },
                          hasRecoveryData: ProtectedFiles.kind(location.vaultRoot + "/recovery.n11r") == .file)
    }
}
