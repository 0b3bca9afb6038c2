// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import Glibc
import CNu11Gtk

/// Swift's side of GObject: signals with closures, main-loop posting, widget casts.
/// Everything here runs on the GTK main thread unless it says otherwise.

typealias Widget = UnsafeMutablePointer<GtkWidget>

/// A closure kept alive for as long as the signal connection that calls it.
final class SignalBox {
    let body: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void
    init(_ body: @escaping (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void) { self.body = body }
}

private let releaseBox: GClosureNotify = { data, _ in
    if let data { Unmanaged<SignalBox>.fromOpaque(data).release() }
}

/// Connects a signal whose handler takes (instance, user data).
@discardableResult
func on(_ object: UnsafeMutableRawPointer?, _ signal: String, _ body: @escaping () -> Void) -> UInt {
    let box = SignalBox { _, _ in body() }
    // Swapped: the user data comes first, whatever arguments the signal has after it.
    let handler: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        guard let data else { return }
        Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().body(nil, nil)
    }
    return g_signal_connect_data(object, signal, unsafeBitCast(handler, to: GCallback.self),
                                 Unmanaged.passRetained(box).toOpaque(), releaseBox, G_CONNECT_SWAPPED)
}

/// Connects a signal whose handler takes (instance, one pointer-sized argument, user data).
@discardableResult
func on1(_ object: UnsafeMutableRawPointer?, _ signal: String,
         _ body: @escaping (UnsafeMutableRawPointer?) -> Void) -> UInt {
    let box = SignalBox { arg, _ in body(arg) }
    // Swapped: (user data, first argument, …).
    let handler: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { data, arg in
        guard let data else { return }
        Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().body(arg, nil)
    }
    return g_signal_connect_data(object, signal, unsafeBitCast(handler, to: GCallback.self),
                                 Unmanaged.passRetained(box).toOpaque(), releaseBox, G_CONNECT_SWAPPED)
}

/// A closure the main loop runs once, posted from any thread.
private final class MainWork: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// Runs `body` on the GTK main thread, soon (safe to call from any thread).
func onMain(_ body: @escaping () -> Void) {
    let work = Unmanaged.passRetained(MainWork(body)).toOpaque()
    g_idle_add_full(Int32(G_PRIORITY_DEFAULT_IDLE), { data in
        guard let data else { return 0 }
        Unmanaged<MainWork>.fromOpaque(data).takeRetainedValue().body()
        return 0
    }, work, nil)
}

/// A repeating timer on the main loop; return false from `body` to stop it.
final class Repeating {
    let body: () -> Bool
    init(_ body: @escaping () -> Bool) { self.body = body }
}

@discardableResult
func every(milliseconds: UInt32, _ body: @escaping () -> Bool) -> UInt32 {
    let box = Unmanaged.passRetained(Repeating(body)).toOpaque()
    return g_timeout_add_full(Int32(G_PRIORITY_DEFAULT), milliseconds, { data in
        guard let data else { return 0 }
        return Unmanaged<Repeating>.fromOpaque(data).takeUnretainedValue().body() ? 1 : 0
    }, box, { data in
        if let data { Unmanaged<Repeating>.fromOpaque(data).release() }
    })
}

// MARK: casts and small helpers

@inline(__always) func raw(_ w: Widget?) -> UnsafeMutableRawPointer? { UnsafeMutableRawPointer(w) }
@inline(__always) func op(_ w: Widget?) -> OpaquePointer? { w.map { OpaquePointer($0) } }
/// The same widget as the typed pointer a GTK function wants (GtkBox, GtkGrid, …).
@inline(__always) func typed<T>(_ p: OpaquePointer?) -> UnsafeMutablePointer<T>? { p.map { UnsafeMutablePointer<T>($0) } }
@inline(__always) func typed<T>(_ w: Widget?) -> UnsafeMutablePointer<T>? { w.map { UnsafeMutablePointer<T>(OpaquePointer($0)) } }
@inline(__always) func raw(_ p: OpaquePointer?) -> UnsafeMutableRawPointer? { p.map { UnsafeMutableRawPointer($0) } }
@inline(__always) func widget(_ p: OpaquePointer?) -> Widget? { p.map { Widget($0) } }
@inline(__always) func widget(_ p: UnsafeMutablePointer<some Any>?) -> Widget? { p.map { Widget(OpaquePointer($0)) } }

/// A button with a visible label and the same accessible name.
func button(_ label: String, name: String? = nil, style: String? = nil, _ action: @escaping () -> Void) -> Widget {
    let b = gtk_button_new_with_label(label)
    if let style { gtk_widget_add_css_class(b, style) }
    n11g_set_label(b, name ?? label)
    on(raw(b), "clicked", action)
    return must(b)
}

/// An icon button; `name` is what screen readers (and the tests) call it.
func iconButton(_ icon: String, name: String, _ action: @escaping () -> Void) -> Widget {
    let b = gtk_button_new_from_icon_name(icon)
    gtk_widget_set_tooltip_text(b, name)
    n11g_set_label(b, name)
    on(raw(b), "clicked", action)
    return must(b)
}

func label(_ text: String, style: String? = nil, wrap: Bool = false) -> Widget {
    let l = gtk_label_new(text)
    if let style { gtk_widget_add_css_class(l, style) }
    if wrap { gtk_label_set_wrap(op(l), 1) }
    return must(l)
}

func setText(_ label: Widget?, _ text: String) { gtk_label_set_text(op(label), text) }

func box(_ vertical: Bool, spacing: Int32 = 6, _ children: [Widget?] = []) -> Widget {
    let b = must(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing))
    for c in children { gtk_box_append(typed(b), c) }
    return b
}

/// GTK's constructors return NULL only when memory is exhausted, where GLib aborts first.
func must<T>(_ p: T?, _ what: StaticString = #function) -> T {
    guard let p else { fatalError("GTK returned no object in \(what)") }
    return p
}

func append(_ parent: Widget?, _ child: Widget?) { gtk_box_append(typed(parent), child) }

func margins(_ w: Widget?, _ m: Int32) {
    gtk_widget_set_margin_top(w, m)
    gtk_widget_set_margin_bottom(w, m)
    gtk_widget_set_margin_start(w, m)
    gtk_widget_set_margin_end(w, m)
}

/// GtkEventController is opaque to Swift; gestures come as typed pointers.
func controller(_ p: UnsafeMutablePointer<some Any>?) -> OpaquePointer? { p.map { OpaquePointer($0) } }
func controller(_ p: OpaquePointer?) -> OpaquePointer? { p }

func string(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }

/// A keyboard shortcut (e.g. "<Control>l") on a widget, active anywhere in its window.
func shortcut(_ w: Widget?, _ trigger: String, _ body: @escaping () -> Void) {
    let controller = gtk_shortcut_controller_new()
    gtk_shortcut_controller_set_scope(controller, GTK_SHORTCUT_SCOPE_GLOBAL)
    let box = Unmanaged.passRetained(Repeating { body(); return true }).toOpaque()
    let action = gtk_callback_action_new({ _, _, data in
        guard let data else { return 0 }
        _ = Unmanaged<Repeating>.fromOpaque(data).takeUnretainedValue().body()
        return 1
    }, box, { data in if let data { Unmanaged<Repeating>.fromOpaque(data).release() } })
    gtk_shortcut_controller_add_shortcut(controller, gtk_shortcut_new(gtk_shortcut_trigger_parse_string(trigger), action))
    gtk_widget_add_controller(w, controller)
}

/// A key-press handler that sees the key value and says whether it handled the key.
final class KeyBox {
    let body: (UInt32) -> Bool
    init(_ body: @escaping (UInt32) -> Bool) { self.body = body }
}

func onKeyValue(_ controller: OpaquePointer?, _ body: @escaping (UInt32) -> Bool) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Int32 = { _, key, _, _, data in
        guard let data else { return 0 }
        return Unmanaged<KeyBox>.fromOpaque(data).takeUnretainedValue().body(key) ? 1 : 0
    }
    g_signal_connect_data(raw(controller), "key-pressed", unsafeBitCast(handler, to: GCallback.self),
                          Unmanaged.passRetained(KeyBox(body)).toOpaque(), { data, _ in
                              if let data { Unmanaged<KeyBox>.fromOpaque(data).release() }
                          }, GConnectFlags(rawValue: 0))
}

/// A swipe: its horizontal velocity (pixels per second).
final class SwipeBox {
    let body: (Double) -> Void
    init(_ body: @escaping (Double) -> Void) { self.body = body }
}

func onSwipe(_ controller: OpaquePointer?, _ body: @escaping (Double) -> Void) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, Double, Double, UnsafeMutableRawPointer?) -> Void = { _, dx, _, data in
        if let data { Unmanaged<SwipeBox>.fromOpaque(data).takeUnretainedValue().body(dx) }
    }
    g_signal_connect_data(raw(controller), "swipe", unsafeBitCast(handler, to: GCallback.self),
                          Unmanaged.passRetained(SwipeBox(body)).toOpaque(), { data, _ in
                              if let data { Unmanaged<SwipeBox>.fromOpaque(data).release() }
                          }, GConnectFlags(rawValue: 0))
}
