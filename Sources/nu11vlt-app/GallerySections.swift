// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The gallery's date sections. GTK 4.8 (Debian 12) has no section headers in a grid view
/// (they came in 4.12), so the grid's model holds cells, not only items: a section starts
/// a new row with a header cell (its date) and spacer cells to the row's end, and its last
/// row is filled with spacers. The grid lays out as many columns as fit its width (its
/// maximum, kept at that number by `Gallery.fitColumns`), so every header starts a row.
/// Headers and spacers are neither selectable nor activatable, and hold no item.
enum GalleryCell: Equatable {
    case item(ItemID)
    case header(String)
    case spacer

    /// The text the model (a GtkStringList) holds: an item's hex ID, "h:" and the header's
    /// text, or "s".
    var modelText: String {
        switch self {
        case .item(let id): id.hex
        case .header(let text): "h:" + text
        case .spacer: "s"
        }
    }

    init?(modelText text: String) {
        if text == "s" { self = .spacer } else if text.hasPrefix("h:") { self = .header(String(text.dropFirst(2))) } else {
            guard let id = try? ItemID(hex: text) else { return nil }
            self = .item(id)
        }
    }
}

/// The cells behind the grid's model: a row's text is made when GTK first asks for the row
/// (`n11g_cell_model_new`'s provider, on the main thread), not for 100,000 rows up front.
@MainActor
final class CellSource {
    var cells: [GalleryCell] = []

    /// A model over this source's cells; the model keeps the source until it is finalized.
    func model() -> OpaquePointer? {
        let text: @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeMutablePointer<CChar>?, UInt) -> Void = { data, position, buffer, length in
            guard let data, let buffer, length > 0 else { return }
            let source = Unmanaged<CellSource>.fromOpaque(data).takeUnretainedValue()
            // GTK asks a list model for its items on the main thread only.
            let text = MainActor.assumeIsolated { Int(position) < source.cells.count ? source.cells[Int(position)].modelText : "" }
            let bytes = Array(text.utf8.prefix(Int(length) - 1))
            for (i, byte) in bytes.enumerated() { buffer[i] = CChar(bitPattern: byte) }
            buffer[bytes.count] = 0
        }
        let release: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
            if let data { Unmanaged<CellSource>.fromOpaque(data).release() }
        }
        return n11g_cell_model_new(text, Unmanaged.passRetained(self).toOpaque(), release)
    }
}

/// The gallery items' sort dates: in the listing's order, or by ID.
enum ItemDates {
    case aligned([Date])
    case byID([ItemID: Date])
}

/// How finely the sections split the items: by day, month or year (`-` and `+` in the
/// gallery, as a photo app's zoom level).
enum Grouping: Int, CaseIterable {
    case day, month, year

    var coarser: Grouping { Grouping(rawValue: min(rawValue + 1, Grouping.year.rawValue)) ?? .year }
    var finer: Grouping { Grouping(rawValue: max(rawValue - 1, 0)) ?? .day }

    /// The header of the section `date` falls in, in the user's time zone: "Fri, 1 May 2024"
    /// (short enough for one cell), "May 2024" or "2024".
    func header(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale.current
        formatter.timeZone = .current
        switch self {
        case .day: formatter.setLocalizedDateFormatFromTemplate("EEEdMMMyyyy")
        case .month: formatter.setLocalizedDateFormatFromTemplate("MMMMyyyy")
        case .year: formatter.setLocalizedDateFormatFromTemplate("yyyy")
        }
        return formatter.string(from: date)
    }

    /// The cells of `ids` (in display order) with a header wherever the section changes.
    /// Items without a date (none should lack one) join the section before them. The items
    /// come sorted by date, so the calendar is asked once per section, not once per item
    /// (10,000 items, a few hundred days: this runs on the main thread before the first frame).
    func cells(_ ids: [ItemID], date: (Int, ItemID) -> Date?, columns: Int) -> [GalleryCell] {
        let columns = max(1, columns)
        var cells: [GalleryCell] = []
        cells.reserveCapacity(ids.count + ids.count / 4 + columns)
        var calendar = Calendar.current
        calendar.timeZone = .current
        let unit: Calendar.Component = self == .day ? .day : self == .month ? .month : .year
        var current: DateInterval?
        for (i, id) in ids.enumerated() {
            if let date = date(i, id), current.map({ !($0.start <= date && date < $0.end) }) ?? true,
               let section = calendar.dateInterval(of: unit, for: date) {
                if !cells.isEmpty { pad(&cells, columns) }
                cells.append(.header(header(date)))
                pad(&cells, columns)
                current = section
            }
            cells.append(.item(id))
        }
        if !cells.isEmpty { pad(&cells, columns) }
        return cells
    }

    private func pad(_ cells: inout [GalleryCell], _ columns: Int) {
        while cells.count % columns != 0 { cells.append(.spacer) }
    }
}

extension Tile {
    /// A section's header: its date in large type, no picture; the accessible name says what
    /// it is ("Section: May 2024").
    func showHeader(_ text: String) {
        clear()
        gtk_widget_set_visible(frame, 0)
        gtk_widget_add_css_class(name, "title-4")
        gtk_label_set_xalign(op(name), 0)
        gtk_label_set_ellipsize(op(name), PANGO_ELLIPSIZE_NONE)
        gtk_label_set_wrap(op(name), 1)
        setText(name, text)
        n11g_set_label(root, "Section: " + text)
    }

    /// An empty cell that ends a section's row.
    func showSpacer() {
        clear()
        gtk_widget_set_visible(frame, 0)
        n11g_set_label(root, "")
    }
}
