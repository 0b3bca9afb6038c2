// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// `rekey --content`: for a suspected leak of item keys. After the domain keys rotate,
/// every item of this vault is re-encrypted, streaming, under a fresh item key — as a new
/// item through the one commit path (new ID, like a note edit; the old
/// one crypto-shredded at the same commit point), keeping its album, name, dates and fade
/// deadline; thumbnails are made again. A marker in the key store holds the insertion
/// sequence the job started at: re-encrypted items get later ones, so a run cut short is
/// resumed by running the command again, which re-encrypts only what is left.
extension Maintenance {
    var contentTag: String { get throws { Hex.encode(AuditTrail.logID(try keys)) } }

    /// Whether an interrupted `rekey --content` has items left.
    public var contentRotationPending: Bool {
        ((try? keyStore.contentRotation(contentTag)) ?? nil) != nil
    }

    /// Re-encrypts every item; returns the re-encrypted count and the items that could not
    /// be (damaged: `check` reports them), old ID → new ID.
    public func rekeyContent(progress: (Int, Int) -> Void = { _, _ in }) throws -> (map: [(old: String, new: String)], failed: [String]) {
        let tag = try contentTag
        let through: Int64
        if let pending = try keyStore.contentRotation(tag) {
            through = pending
        } else {
            through = try index.maxSeq()
            try keyStore.setContentRotation(tag, through: through)
        }
        var total = 0
        var cursor: Int64 = 0
        while true {  // counted first, for the progress line
            let page = try visibleRows(kind: nil, afterSeq: cursor, limit: 1000).filter { $0.seq <= through }
            total += page.count
            guard page.count == 1000, let last = page.last else { break }
            cursor = last.seq
        }
        var map: [(String, String)] = []
        var failed: [String] = []
        cursor = 0
        while true {
            let page = try visibleRows(kind: nil, afterSeq: cursor, limit: 256).filter { $0.seq <= through }
            guard let last = page.last else { break }
            for row in page {
                progress(map.count + failed.count, total)
                let deadline = row.domain == .fade ? state.fade.first { $0.id == row.id }?.deadline : nil
                do {
                    forgetCached(row.id)
                    let new = try vault.items.reencrypt(row, into: row.domain, fadeDeadline: deadline, album: row.album)
                    map.append((row.id.hex, new.hex))
                } catch let error as Nu11Error where error.code == .corrupted || error.code == .authenticationFailed {
                    failed.append(row.id.hex)
                }
            }
            cursor = last.seq
        }
        progress(total, total)
        try keyStore.setContentRotation(tag, through: nil)
        audit("rekey content", count: map.count, detail: failed.isEmpty ? nil : "\(failed.count) damaged vault.items.item(s) left as they were")
        return (map, failed)
    }
}
