// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import Glibc
import CNu11Gtk

/// Swift's side of GObject: signals with closures, main-loop posting, widget casts.
/// Everything here runs on the GTK main thread unless it says otherwise.

typealias Widget = UnsafeMutablePointer<GtkWidget>

/// The one box that keeps a Swift closure alive for C: a signal connection, an idle or timer
/// source, a shortcut. What it holds is `Sendable` (every UI closure is `@MainActor`, so it
/// is), and the C trampolines below run it through `MainActor.assumeIsolated`: GTK calls
/// them on the main thread, and the runtime checks that it does.
final class ClosureBox<F: Sendable>: Sendable {
    let body: F
    init(_ body: F) { self.body = body }
    /// A +1 reference for C; `releaseClosureBox` drops it.
    var retained: UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }
    static func body(_ data: UnsafeMutableRawPointer) -> F { Unmanaged<ClosureBox<F>>.fromOpaque(data).takeUnretainedValue().body }
}

typealias MainAction = @MainActor () -> Void

/// Drops the reference a `ClosureBox` gave C (any box: the release does not need its type).
func releaseClosureBox(_ data: UnsafeMutableRawPointer?) {
    if let data { Unmanaged<AnyObject>.fromOpaque(data).release() }
}

private let releaseBox: GClosureNotify = { data, _ in releaseClosureBox(data) }

/// Connects `body` to `signal` with the C handler `handler` (which finds the box in its
/// last argument); the box lives as long as the connection.
@MainActor @discardableResult
func connectSignal<F: Sendable>(_ object: UnsafeMutableRawPointer?, _ signal: String, _ body: F, handler: GCallback,
                          flags: GConnectFlags = GConnectFlags(rawValue: 0)) -> UInt {
    g_signal_connect_data(object, signal, handler, ClosureBox(body).retained, releaseBox, flags)
}

/// Connects a signal whose handler takes (instance, user data).
@MainActor @discardableResult
func on(_ object: UnsafeMutableRawPointer?, _ signal: String, _ body: @escaping MainAction) -> UInt {
    // Swapped: the user data comes first, whatever arguments the signal has after it.
    let handler: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        guard let data else { return }
        let body = ClosureBox<MainAction>.body(data)
        MainActor.assumeIsolated { body() }
    }
    return connectSignal(object, signal, body, handler: unsafeBitCast(handler, to: GCallback.self), flags: G_CONNECT_SWAPPED)
}

/// Connects a signal whose handler takes (instance, one pointer-sized argument, user data).
@MainActor @discardableResult
func on1(_ object: UnsafeMutableRawPointer?, _ signal: String,
         _ body: @escaping @MainActor (UnsafeMutableRawPointer?) -> Void) -> UInt {
    // Swapped: (user data, first argument, …).
    let handler: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { data, arg in
        guard let data else { return }
        let arg = UInt(bitPattern: arg)
        MainActor.assumeIsolated {
            ClosureBox<@MainActor (UnsafeMutableRawPointer?) -> Void>.body(data)(UnsafeMutableRawPointer(bitPattern: arg))
        }
    }
    return connectSignal(object, signal, body, handler: unsafeBitCast(handler, to: GCallback.self), flags: G_CONNECT_SWAPPED)
}

/// Runs `body` on the GTK main thread, soon. Safe to call from any thread: the worker posts
/// its results this way (Swift's own main-actor hop would wait for a dispatch main queue that
/// GTK's loop never drains).
func onMain(_ body: @escaping MainAction) {
    g_idle_add_full(Int32(G_PRIORITY_DEFAULT_IDLE), { data in
        guard let data else { return 0 }
        let body = ClosureBox<MainAction>.body(data)
        MainActor.assumeIsolated { body() }
        return 0
    }, ClosureBox(body).retained, { releaseClosureBox($0) })
}

/// A repeating timer on the main loop; return false from `body` to stop it.
@MainActor @discardableResult
func every(milliseconds: UInt32, _ body: @escaping @MainActor () -> Bool) -> UInt32 {
    g_timeout_add_full(Int32(G_PRIORITY_DEFAULT), milliseconds, { data in
        guard let data else { return 0 }
        let body = ClosureBox<@MainActor () -> Bool>.body(data)
        return MainActor.assumeIsolated { body() } ? 1 : 0
    }, ClosureBox(body).retained, { releaseClosureBox($0) })
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
@MainActor
func button(_ label: String, name: String? = nil, style: String? = nil, _ action: @escaping MainAction) -> Widget {
    let b = gtk_button_new_with_label(label)
    if let style { gtk_widget_add_css_class(b, style) }
    n11g_set_label(b, name ?? label)
    on(raw(b), "clicked", action)
    return must(b)
}

/// An icon button; `name` is what screen readers (and the tests) call it.
@MainActor
func iconButton(_ icon: String, name: String, _ action: @escaping MainAction) -> Widget {
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

/// A key-press handler that sees the key value and says whether it handled the key.
@MainActor
func onKeyValue(_ controller: OpaquePointer?, _ body: @escaping @MainActor (UInt32) -> Bool) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Int32 = { _, key, _, _, data in
        guard let data else { return 0 }
        let body = ClosureBox<@MainActor (UInt32) -> Bool>.body(data)
        return MainActor.assumeIsolated { body(key) } ? 1 : 0
    }
    connectSignal(raw(controller), "key-pressed", body, handler: unsafeBitCast(handler, to: GCallback.self))
}

/// A key press with its modifiers (GdkModifierType bits); return true to stop the key there.
@MainActor
func onKeyState(_ controller: OpaquePointer?, _ body: @escaping @MainActor (UInt32, UInt32) -> Bool) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Int32 = { _, key, _, state, data in
        guard let data else { return 0 }
        let body = ClosureBox<@MainActor (UInt32, UInt32) -> Bool>.body(data)
        return MainActor.assumeIsolated { body(key, state) } ? 1 : 0
    }
    connectSignal(raw(controller), "key-pressed", body, handler: unsafeBitCast(handler, to: GCallback.self))
}

/// A swipe: its horizontal velocity (pixels per second).
@MainActor
func onSwipe(_ controller: OpaquePointer?, _ body: @escaping @MainActor (Double) -> Void) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, Double, Double, UnsafeMutableRawPointer?) -> Void = { _, dx, _, data in
        guard let data else { return }
        let body = ClosureBox<@MainActor (Double) -> Void>.body(data)
        MainActor.assumeIsolated { body(dx) }
    }
    connectSignal(raw(controller), "swipe", body, handler: unsafeBitCast(handler, to: GCallback.self))
}
