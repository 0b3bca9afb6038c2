// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format
import Nu11Storage

/// The rule at every commit point: before it, a failure undoes everything and the command
/// fails; after it, nothing is ever rolled back — a late failure (removing a journal
/// marker, the fsync that makes a rename durable) is reported as "done, but …", and the
/// next command finishes the cleanup from the journal.
extension Vault {
    func notice(_ message: String, remedy: Remedy? = nil) {
        let notice = Notice(message: message, remedy: remedy)
        if noticeHandlerSet { onNotice(notice) } else { pendingNotices.append(notice) }
    }

    /// Runs cleanup that follows a commit; a failure becomes a notice, never an error.
    func afterCommit(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch {
            notice("done, but \(what) failed (\(Self.describe(error))); the next time the vault is opened, it is finished")
        }
    }

    /// Runs the step that *is* the commit (e.g. writing the master record): if it took effect
    /// and only its durability step failed, the command succeeded and says so.
    func commitStep(_ what: String, _ body: () throws -> Void) throws {
        do { try body() } catch let error as Nu11Error where error.tookEffect {
            notice("done, but \(what) may not survive a power cut yet (\(error.message))")
        }
    }

    static func describe(_ error: any Error) -> String {
        Nu11Error.words(error)
    }
}
