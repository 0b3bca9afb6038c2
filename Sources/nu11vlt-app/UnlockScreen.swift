// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The unlock screen: one PIN field (and an on-screen keypad) that behaves the same for the
/// primary, backup and duress PINs. The gate (fade sweep, Skeleton check, the wrong-PIN delay)
/// runs before the field is offered; a delay is shown as a countdown with the field disabled.
@MainActor
final class UnlockScreen {
    unowned let app: App
    let root: Widget
    private let entry: Widget
    private let status: Widget
    private let unlockButton: Widget
    /// "Use security key": shown when a FIDO2 key is enrolled (the seed's Face ID).
    private let keyButton: Widget
    private var keysEnrolled = false
    private var keypad: [Widget] = []
    /// Monotonic time when a PIN may be tried again.
    private var waitUntil: Double = 0
    private var busy = false
    private var failures = 0
    /// Why this screen is up ("Locked", "Locked after 5m without input"), kept above the prompt.
    private let reason: String?

    init(app: App, message: String?) {
        self.app = app
        reason = message
        let title = label("Nu11VLT", style: "title-1")
        status = label(message ?? "Checking the vault…", style: "dim-label", wrap: true)
        n11g_set_label(status, "Unlock status")
        entry = gtk_password_entry_new()
        gtk_password_entry_set_show_peek_icon(op(entry), 0)
        n11g_set_label(entry, "PIN")
        gtk_widget_set_size_request(entry, 260, -1)
        let grid = gtk_grid_new()
        gtk_grid_set_row_spacing(typed(grid), 6)
        gtk_grid_set_column_spacing(typed(grid), 6)
        gtk_widget_set_halign(grid, GTK_ALIGN_CENTER)
        n11g_set_label(grid, "Keypad")
        unlockButton = button("Unlock", name: "Unlock vault", style: "suggested-action") {}
        keyButton = button("Use security key", name: "Unlock with security key") {}
        gtk_widget_set_tooltip_text(keyButton, "Touch your security key to unlock; if it has a PIN of its own, type that PIN in the field first")
        gtk_widget_set_visible(keyButton, 0)
        let centre = box(true, spacing: 18)
        gtk_widget_set_valign(centre, GTK_ALIGN_CENTER)
        gtk_widget_set_halign(centre, GTK_ALIGN_CENTER)
        gtk_widget_set_vexpand(centre, 1)
        for child in [title, status, entry, grid, unlockButton, keyButton] { append(centre, child) }
        // A flat header bar: the window's controls and the main menu (About).
        root = box(true, spacing: 0, [flatHeader(app), centre])
        let keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "⌫", "0", "✓"]
        for (i, key) in keys.enumerated() {
            let name = key == "⌫" ? "Delete digit" : key == "✓" ? "Unlock with keypad" : "Digit \(key)"
            let b = button(key, name: name, style: "title-2") { [unowned self] in self.keypadPressed(key) }
            gtk_widget_set_size_request(b, 72, 56)
            gtk_widget_set_focus_on_click(b, 0)
            gtk_grid_attach(typed(grid), b, Int32(i % 3), Int32(i / 3), 1, 1)
            keypad.append(b)
        }
        on(raw(unlockButton), "clicked") { [unowned self] in self.submit() }
        on(raw(entry), "activate") { [unowned self] in self.submit() }
        on(raw(keyButton), "clicked") { [unowned self] in self.submitSecurityKey() }
        setEnabled(false)
    }

    /// The gate first (it may shred expired fade items or fire the Skeleton Switch), then the
    /// prompt — or the countdown of a wrong-PIN delay.
    func start(after wrong: Bool = false) {
        app.session.runLocked({ locked -> (LockedVault.Presence, LockedVault.PINStatus?) in
            let presence = locked.presence
            guard presence == .complete else { return (presence, nil) }
            return (presence, try locked.pinStatus())
        }) { [weak self] result in
            guard let self else { return }
            refreshSecurityKeys()
            switch result {
            case .success((.none, _)):
                app.showCreate()
            case .success((let half, nil)):
                app.showHalf(half)
            case .success((_, let pin?)):
                failures = pin.failures
                if pin.secondsLeft > 0 {
                    wait(pin.secondsLeft)
                } else if pin.failures > 0 {
                    ready(wrongText + ". Enter your PIN")
                } else {
                    ready(reason.map { "\($0). Enter your PIN" })
                }
            case .failure(let error):
                setText(status, describe(error))
            }
        }
    }

    /// "Wrong PIN (3 failed attempts)": the count the delay grows with.
    private var wrongText: String { "Wrong PIN (\(failures) failed attempt\(failures == 1 ? "" : "s"))" }

    private func ready(_ message: String?) {
        waitUntil = 0
        setText(status, message ?? "Enter your PIN")
        setEnabled(true)
        gtk_widget_grab_focus(entry)
    }

    private func wait(_ seconds: Double) {
        waitUntil = App.monotonic() + seconds
        setEnabled(false)
        tick()
    }

    /// Called every second: the countdown.
    func tick() {
        guard waitUntil > 0 else { return }
        let left = Int((waitUntil - App.monotonic()).rounded(.up))
        if left <= 0 {
            ready(wrongText + ". Enter your PIN")
        } else {
            setText(status, wrongText + ". Try again in \(left) s")
        }
    }

    /// Whether any security key is enrolled: the button shows then (read before unlock).
    private func refreshSecurityKeys() {
        app.session.runLocked({ locked in (try? locked.securityKeys().isEmpty == false) ?? false }) { [weak self] result in
            guard let self, case .success(let enrolled) = result else { return }
            keysEnrolled = enrolled
            gtk_widget_set_visible(keyButton, enrolled ? 1 : 0)
        }
    }

    private func setEnabled(_ on: Bool) {
        gtk_widget_set_sensitive(entry, on ? 1 : 0)
        gtk_widget_set_sensitive(unlockButton, on ? 1 : 0)
        gtk_widget_set_sensitive(keyButton, on ? 1 : 0)
        for b in keypad { gtk_widget_set_sensitive(b, on ? 1 : 0) }
    }

    private func keypadPressed(_ key: String) {
        switch key {
        case "⌫":
            let text = string(gtk_editable_get_text(op(entry)))
            gtk_editable_set_text(op(entry), String(text.dropLast()))
        case "✓": submit()
        default:
            var position = Int32(-1)
            gtk_editable_insert_text(op(entry), key, -1, &position)
            gtk_editable_set_position(op(entry), -1)
        }
    }

    private func submit() {
        guard !busy, waitUntil == 0, let pin = takeField() else { return }
        attempt("Unlocking…", counted: { $0.code == .authenticationFailed || $0.code == .lockedOut }) { app, done in
            app.session.unlock(pin: pin, done: done)
        }
    }

    /// The security key: a touch; the field, when filled, carries the key's own PIN.
    private func submitSecurityKey() {
        guard !busy, waitUntil == 0, keysEnrolled else { return }
        let keyPIN = takeField()
        // A wrong key is counted as a wrong PIN is: the same delay. A wrong PIN of the key's own is the key's to count.
        attempt("Touch your security key…", counted: { $0 == .wrongSecurityKey || $0.code == .lockedOut }) { app, done in
            app.session.unlock(securityKeyPIN: keyPIN, done: done)
        }
    }

    /// The field's text, straight from GTK's (non-pageable) password buffer into guarded
    /// memory, and the field emptied; nil when it was empty.
    private func takeField() -> SecretBytes? {
        guard let text = gtk_editable_get_text(op(entry)), text.pointee != 0 else { return nil }
        let secret = SecretBytes(copying: UnsafeRawBufferPointer(start: text, count: strlen(text)))
        gtk_editable_set_text(op(entry), "")
        return secret
    }

    /// One unlock attempt: a counted failure shows the count (and the delay, if one runs now)
    /// — the same answer whichever slot was tried; any other failure is said as it is.
    private func attempt(_ waiting: String, counted: @escaping (Nu11Error) -> Bool,
                         _ send: (App, @escaping @MainActor (Result<DomainKeys.Role, any Error>) -> Void) -> Void) {
        busy = true
        setEnabled(false)
        setText(status, waiting)
        send(app) { [weak self] result in
            guard let self else { return }
            busy = false
            switch result {
            case .success(let role):
                app.unlocked(role: role)
            case .failure(let error as Nu11Error) where counted(error):
                start(after: true)
            case .failure(let error):
                setText(status, describe(error))
                setEnabled(true)
            }
        }
    }
}
