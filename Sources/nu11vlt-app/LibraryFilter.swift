// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Vault

/// What narrows a gallery section's grid (the filter bar): the kind, an album, "has a
/// location", a date range (the date the grid sorts by: capture, else file, else import time)
/// and a part of the name. Applied on the vault's worker inside the section's listing: the
/// kind and the dates come with the listing itself (`Items.libraryEntries`); the name and the
/// location need each candidate's summary, decoded only while such a filter is set.
struct LibraryFilter: Sendable, Equatable {
    enum Kind: Int, Sendable, CaseIterable {
        case all, photos, videos, files

        var label: String {
            switch self {
            case .all: "All"
            case .photos: "Photos"
            case .videos: "Videos"
            case .files: "Files"
            }
        }
    }

    var kind = Kind.all
    /// Only items in this album (in the Photos and Files sections; an album section is one already).
    var album: String?
    var hasLocation = false
    /// The first and last day shown (inclusive), in the user's time zone.
    var from: Date?
    var to: Date?
    var text = ""

    var isEmpty: Bool { self == LibraryFilter() }
    var needsSummaries: Bool { hasLocation || !text.isEmpty }

    /// Which media a section shows before any filter: Photos the photos and videos, Files the
    /// rest, an album everything in it.
    enum Scope: Sendable { case media, files, everything }

    func admits(_ entry: LibraryEntry, scope: Scope) -> Bool {
        switch scope {
        case .media: if entry.media == .other { return false }
        case .files: if entry.media != .other { return false }
        case .everything: break
        }
        switch kind {
        case .all: break
        case .photos: if entry.media != .image { return false }
        case .videos: if entry.media != .video { return false }
        case .files: if entry.media != .other { return false }
        }
        if let from, entry.date < from { return false }
        if let to, entry.date >= to.addingTimeInterval(86400) { return false }
        return true
    }

    func admits(_ item: ItemSummary) -> Bool {
        if hasLocation && item.gps != true { return false }
        if !text.isEmpty && item.name.range(of: text, options: [.caseInsensitive, .diacriticInsensitive]) == nil { return false }
        return true
    }

    /// Runs on the worker: the section's listing narrowed by this filter, in display order
    /// (newest first).
    func entries(_ vault: Vault, album: String?, scope: Scope) throws -> [LibraryEntry] {
        var entries = try vault.items.libraryEntries(album: album ?? self.album).filter { admits($0, scope: scope) }
        if needsSummaries {
            var kept = Set<ItemID>()
            // In slices, so memory stays bounded at 100,000 items.
            var at = 0
            while at < entries.count {
                let slice = entries[at ..< min(entries.count, at + 2000)].map(\.id)
                for item in try vault.items.summaries(slice) where admits(item) { kept.insert(item.id) }
                at += 2000
            }
            entries = entries.filter { kept.contains($0.id) }
        }
        return entries.reversed()
    }

    /// "2024-05-01" as the start of that day in the user's time zone (nil: not such a date).
    static func day(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.isLenient = false
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
