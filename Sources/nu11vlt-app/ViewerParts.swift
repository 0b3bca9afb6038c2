// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Vault

/// The viewer's picture, zoomable like Loupe's: it fits the view at first; `+`/`-`/`0`,
/// Ctrl+scroll and a pinch zoom; a drag pans when the image is larger than the view.
@MainActor
final class ZoomableImage {
    let root: Widget
    let picture: Widget
    /// "Fit" or "Zoom 150%" (of the fitted size), for people and the tests.
    let level: Widget
    private(set) var scale = 1.0
    private var panStart = (0.0, 0.0)

    init() {
        picture = must(gtk_picture_new())
        gtk_picture_set_content_fit(op(picture), GTK_CONTENT_FIT_CONTAIN)
        gtk_widget_set_focusable(picture, 1)
        n11g_set_label(picture, "Photo")
        root = must(gtk_scrolled_window_new())
        gtk_scrolled_window_set_child(op(root), picture)
        gtk_widget_set_vexpand(root, 1)
        gtk_widget_set_hexpand(root, 1)
        level = label("Fit", style: "caption")
        let scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL)
        onScroll(controller(scroll)) { [unowned self] dy, control in
            guard control else { return false }
            self.zoom(by: dy < 0 ? 1.25 : 0.8)
            return true
        }
        gtk_widget_add_controller(root, controller(scroll))
        let pinch = gtk_gesture_zoom_new()
        onPinch(controller(pinch)) { [unowned self] factor in self.set(max(1, min(8, factor))) }
        gtk_widget_add_controller(picture, controller(pinch))
        let drag = gtk_gesture_drag_new()
        onDrag(controller(drag), begin: { [unowned self] in
            self.panStart = (gtk_adjustment_get_value(self.horizontal), gtk_adjustment_get_value(self.vertical))
        }, update: { [unowned self] dx, dy in
            guard self.scale > 1 else { return }
            gtk_adjustment_set_value(self.horizontal, self.panStart.0 - dx)
            gtk_adjustment_set_value(self.vertical, self.panStart.1 - dy)
        })
        gtk_widget_add_controller(picture, controller(drag))
        set(1)
    }

    private var horizontal: UnsafeMutablePointer<GtkAdjustment>? { gtk_scrolled_window_get_hadjustment(op(root)) }
    private var vertical: UnsafeMutablePointer<GtkAdjustment>? { gtk_scrolled_window_get_vadjustment(op(root)) }

    func show(_ paintable: OpaquePointer?) {
        gtk_picture_set_paintable(op(picture), paintable)
        set(1)
    }

    func zoom(by factor: Double) { set(max(1, min(8, scale * factor))) }

    /// `1` fits the image to the view; more enlarges it around the view's centre.
    func set(_ value: Double) {
        scale = value
        guard value > 1, let paintable = gtk_picture_get_paintable(op(picture)) else {
            gtk_widget_set_size_request(picture, -1, -1)
            gtk_widget_set_vexpand(picture, 1)
            gtk_widget_set_hexpand(picture, 1)
            setText(level, "Fit")
            return
        }
        let iw = Double(max(1, gdk_paintable_get_intrinsic_width(paintable)))
        let ih = Double(max(1, gdk_paintable_get_intrinsic_height(paintable)))
        let vw = Double(max(1, gtk_widget_get_width(root)))
        let vh = Double(max(1, gtk_widget_get_height(root)))
        let fit = min(vw / iw, vh / ih)
        gtk_widget_set_size_request(picture, Int32(iw * fit * value), Int32(ih * fit * value))
        setText(level, "Zoom \(Int((value * 100).rounded()))%")
    }
}

/// What is known about the item, beside the picture (Loupe's properties): when and where it
/// was taken, with what, its size on screen and on disk, whether a location is stored, its album.
@MainActor
final class InfoPane {
    let root: Widget
    private let body: Widget

    init() {
        body = label("", wrap: true)
        gtk_label_set_xalign(op(body), 0)
        gtk_label_set_selectable(op(body), 1)
        let column = box(true, spacing: 8, [label("Information", style: "heading"), body])
        margins(column, 12)
        gtk_widget_set_size_request(column, 240, -1)
        root = must(gtk_revealer_new())
        gtk_revealer_set_transition_type(op(root), GTK_REVEALER_TRANSITION_TYPE_SLIDE_LEFT)
        gtk_revealer_set_child(op(root), column)
        gtk_revealer_set_reveal_child(op(root), 0)
    }

    var shown: Bool { gtk_revealer_get_reveal_child(op(root)) != 0 }

    func toggle() { gtk_revealer_set_reveal_child(op(root), shown ? 0 : 1) }

    func clear() { setText(body, "") }

    /// `addedOn`: on a shared vault, the device that added the item ("this device", or its name).
    func show(_ item: ItemSummary, addedOn device: String? = nil) {
        let formatter = DateFormatter()
        formatter.dateStyle = .medium
        formatter.timeStyle = .short
        formatter.timeZone = .current
        var lines: [String] = []
        if let taken = item.taken {
            lines.append("Taken: \(formatter.string(from: taken)) (\(TimeZone.current.abbreviation(for: taken) ?? TimeZone.current.identifier))")
        } else {
            lines.append("Taken: not recorded")
        }
        lines.append("Added: \(formatter.string(from: item.created))" + (device.map { " on \($0)" } ?? ""))
        if let camera = item.camera { lines.append("Camera: \(camera)") }
        if let w = item.width, let h = item.height { lines.append("Dimensions: \(w) × \(h)") }
        lines.append("Size: " + ByteCountFormatter.string(fromByteCount: Int64(item.size), countStyle: .file))
        lines.append("Type: \(item.type)")
        if let duration = item.duration { lines.append("Duration: " + Tile.durationText(duration)) }
        if item.motion != nil { lines.append("Live Photo: its motion plays with ▶ (kept as its own video file)") }
        if item.isImage || item.isVideo {
            lines.append("Location: " + (item.gps == true ? "stored in the \(item.isVideo ? "video" : "photo")" : "none stored"))
        }
        lines.append("Album: \(item.album ?? "none")")
        setText(body, lines.joined(separator: "\n"))
    }
}

/// A scroll: its vertical delta and whether Ctrl was held; returns whether it was handled.
@MainActor
func onScroll(_ controller: OpaquePointer?, _ body: @escaping @MainActor (Double, Bool) -> Bool) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, Double, Double, UnsafeMutableRawPointer?) -> Int32 = { scroll, _, dy, data in
        guard let data else { return 0 }
        let body = ClosureBox<@MainActor (Double, Bool) -> Bool>.body(data)
        let state = gtk_event_controller_get_current_event_state(OpaquePointer(scroll))
        let control = (state.rawValue & GDK_CONTROL_MASK.rawValue) != 0
        return MainActor.assumeIsolated { body(dy, control) } ? 1 : 0
    }
    connectSignal(raw(controller), "scroll", body, handler: unsafeBitCast(handler, to: GCallback.self))
}

/// A pinch: the scale since it began.
@MainActor
func onPinch(_ controller: OpaquePointer?, _ body: @escaping @MainActor (Double) -> Void) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, Double, UnsafeMutableRawPointer?) -> Void = { _, scale, data in
        guard let data else { return }
        let body = ClosureBox<@MainActor (Double) -> Void>.body(data)
        MainActor.assumeIsolated { body(scale) }
    }
    connectSignal(raw(controller), "scale-changed", body, handler: unsafeBitCast(handler, to: GCallback.self))
}

/// A drag: `begin` at its start, `update` with the offset since.
@MainActor
func onDrag(_ controller: OpaquePointer?, begin: @escaping MainAction, update: @escaping @MainActor (Double, Double) -> Void) {
    let started: @convention(c) (UnsafeMutableRawPointer?, Double, Double, UnsafeMutableRawPointer?) -> Void = { _, _, _, data in
        guard let data else { return }
        let body = ClosureBox<MainAction>.body(data)
        MainActor.assumeIsolated { body() }
    }
    let moved: @convention(c) (UnsafeMutableRawPointer?, Double, Double, UnsafeMutableRawPointer?) -> Void = { _, dx, dy, data in
        guard let data else { return }
        let body = ClosureBox<@MainActor (Double, Double) -> Void>.body(data)
        MainActor.assumeIsolated { body(dx, dy) }
    }
    connectSignal(raw(controller), "drag-begin", begin, handler: unsafeBitCast(started, to: GCallback.self))
    connectSignal(raw(controller), "drag-update", update, handler: unsafeBitCast(moved, to: GCallback.self))
}
