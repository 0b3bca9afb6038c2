// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// One tile: the thumbnail, the name, and (for fade items) a countdown badge.
@MainActor
final class Tile {
    let root: Widget
    let picture: Widget
    /// A file without a thumbnail (a PDF, a text file, a video before its poster): its type's
    /// icon over the empty picture, so no tile is ever blank.
    let icon: Widget
    let name: Widget
    let badge: Widget
    /// A video's duration over its poster, bottom right.
    let duration: Widget
    /// "LIVE" over a Live Photo's still, top left (its motion plays from the viewer).
    let live: Widget
    /// The picture with its overlays (hidden in a section header or a spacer).
    let frame: Widget

    /// The picture's side, in pixels (device pixels at scale 1).
    nonisolated static let side = 160

    init() {
        picture = gtk_picture_new()
        gtk_picture_set_content_fit(op(picture), GTK_CONTENT_FIT_COVER)
        gtk_widget_set_size_request(picture, Int32(Tile.side), Int32(Tile.side))
        icon = must(gtk_image_new())
        gtk_image_set_pixel_size(op(icon), 64)
        gtk_widget_add_css_class(icon, "dim-label")
        gtk_widget_set_visible(icon, 0)
        duration = label("", style: "osd")
        gtk_widget_add_css_class(duration, "caption")
        gtk_widget_set_halign(duration, GTK_ALIGN_END)
        gtk_widget_set_valign(duration, GTK_ALIGN_END)
        margins(duration, 6)
        gtk_widget_set_visible(duration, 0)
        live = label("LIVE", style: "osd")
        gtk_widget_add_css_class(live, "caption-heading")
        gtk_widget_set_halign(live, GTK_ALIGN_START)
        gtk_widget_set_valign(live, GTK_ALIGN_START)
        margins(live, 6)
        gtk_widget_set_visible(live, 0)
        frame = must(gtk_overlay_new())
        gtk_overlay_set_child(op(frame), picture)
        gtk_overlay_add_overlay(op(frame), icon)
        gtk_overlay_add_overlay(op(frame), duration)
        gtk_overlay_add_overlay(op(frame), live)
        name = label("")
        gtk_label_set_ellipsize(op(name), PANGO_ELLIPSIZE_MIDDLE)
        gtk_label_set_max_width_chars(op(name), 18)
        badge = label("", style: "caption")
        gtk_widget_set_visible(badge, 0)
        root = box(true, spacing: 4, [frame, name, badge])
        margins(root, 4)
        // No drag-out of plaintext: tiles offer no drag source (export is explicit).
    }

    /// A tile whose summary is on its way.
    func clear() {
        gtk_widget_set_visible(frame, 1)
        gtk_widget_remove_css_class(name, "title-4")
        gtk_label_set_xalign(op(name), 0.5)
        gtk_label_set_wrap(op(name), 0)
        gtk_label_set_ellipsize(op(name), PANGO_ELLIPSIZE_MIDDLE)
        setText(name, "")
        gtk_picture_set_paintable(op(picture), nil)
        gtk_widget_set_visible(badge, 0)
        gtk_widget_set_visible(icon, 0)
        gtk_widget_set_visible(duration, 0)
        gtk_widget_set_visible(live, 0)
    }

    func show(_ item: ItemSummary) {
        clear()
        setText(name, item.name)
        // A video says so, with its length: "clip.mp4, video, 0:02"; a Live Photo: "IMG_1.HEIC, Live Photo".
        let spoken = item.isVideo ? item.name + ", video" + (item.duration.map { ", " + Tile.durationText($0) } ?? "")
            : item.motion != nil ? item.name + ", Live Photo" : item.name
        gtk_widget_set_visible(live, item.motion != nil ? 1 : 0)
        n11g_set_label(root, spoken)
        n11g_set_label(picture, spoken)
        gtk_widget_set_visible(duration, item.isVideo ? 1 : 0)
        setText(duration, item.isVideo ? item.duration.map(Tile.durationText) ?? "video" : "")
        gtk_widget_set_visible(badge, item.fadesAt == nil ? 0 : 1)
        if let fades = item.fadesAt { setText(badge, "fades in " + Countdown.text(fades.timeIntervalSinceNow)) }
        gtk_widget_set_visible(icon, item.thumbnail ? 0 : 1)
        if !item.thumbnail { gtk_image_set_from_icon_name(op(icon), Tile.iconName(for: item.name)) }
    }

    /// 0:02, 4:05, 1:02:03.
    static func durationText(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded()))
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s % 3600 / 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }

    /// The generic icon of the file's type, guessed from its name (GIO's shared MIME data).
    static func iconName(for name: String) -> String {
        var uncertain: gboolean = 0
        guard let type = g_content_type_guess(name, nil, 0, &uncertain) else { return "text-x-generic" }
        defer { g_free(type) }
        guard let generic = g_content_type_get_generic_icon_name(type) else { return "text-x-generic" }
        defer { g_free(generic) }
        return String(cString: generic)
    }
}

enum Countdown {
    static func text(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded(.up)))
        if s >= 86400 { return "\(s / 86400)d \(s % 86400 / 3600)h" }
        if s >= 3600 { return "\(s / 3600)h \(s % 3600 / 60)m" }
        if s >= 60 { return "\(s / 60)m \(s % 60)s" }
        return "\(s)s"
    }
}
