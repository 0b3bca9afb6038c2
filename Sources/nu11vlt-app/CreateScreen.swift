// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The first run (issue 33): no vault yet, so no terminal needed — a PIN or passphrase typed
/// twice with its strength said as it is typed, the vault created (Argon2id calibrated on this
/// machine, as `nu11vlt init` does), then the recovery phrase shown once with what to back up,
/// and the vault opens. Cryptomator's "new vault" and Ente's onboarding are the anchors.
@MainActor
final class CreateScreen {
    unowned let app: App
    let root: Widget
    private let pin: Widget
    private let repeatPIN: Widget
    private let strength: Widget
    private let createButton: Widget
    /// "Back up the vault folder" / "Keep it out of backups": neither is chosen for the person.
    private let backupYes: Widget
    private let backupNo: Widget
    private var busy = false

    init(app: App) {
        self.app = app
        let location = app.session.locked.location
        let title = label("Create your vault", style: "title-1")
        let intro = label("""
            Nu11VLT keeps your photos, files and notes encrypted on this computer. Choose a PIN or, \
            better, a passphrase of a few random words: it opens the vault, and nothing can recover it.
            """, style: "dim-label", wrap: true)
        let places = label("Vault folder: \(location.vaultRoot)\nKey store: \(location.keyStoreRoot)", style: "caption", wrap: true)
        pin = gtk_password_entry_new()
        gtk_password_entry_set_show_peek_icon(op(pin), 1)
        n11g_set_label(pin, "New PIN")
        repeatPIN = gtk_password_entry_new()
        n11g_set_label(repeatPIN, "Repeat PIN")
        for entry in [pin, repeatPIN] { gtk_widget_set_size_request(entry, 320, -1) }
        strength = label("At least 4 characters", style: "dim-label", wrap: true)
        gtk_label_set_max_width_chars(op(strength), 48)
        let backupQuestion = label("Back up the vault folder? " + BackupInfo.tradeOff + " Never back up the key store.", wrap: true)
        gtk_label_set_max_width_chars(op(backupQuestion), 48)
        backupYes = must(gtk_check_button_new_with_label("Back up the vault folder"))
        n11g_set_label(backupYes, "Back up the vault folder")
        backupNo = must(gtk_check_button_new_with_label("Keep the vault folder out of backups"))
        n11g_set_label(backupNo, "Keep the vault folder out of backups")
        gtk_check_button_set_group(typed(backupNo), typed(backupYes))
        createButton = button("Create vault", name: "Create vault", style: "suggested-action") {}
        gtk_widget_set_sensitive(createButton, 0)
        let elsewhere = button("Open a vault elsewhere…", style: "flat") { [unowned app] in openElsewhere(app) }
        let column = box(true, spacing: 12, [title, intro, places, label("PIN or passphrase"), pin, label("Repeat it"), repeatPIN,
                                              strength, backupQuestion, backupYes, backupNo, createButton, elsewhere])
        gtk_widget_set_size_request(column, 320, -1)
        gtk_label_set_max_width_chars(op(intro), 48)
        root = scrolledPage(flatHeader(app), column)
        for entry in [pin, repeatPIN] {
            on(raw(entry), "changed") { [unowned self] in self.judge() }
        }
        for choice in [backupYes, backupNo] {
            on(raw(choice), "toggled") { [unowned self] in self.judge() }
        }
        on(raw(repeatPIN), "activate") { [unowned self] in self.submit() }
        on(raw(createButton), "clicked") { [unowned self] in self.submit() }
    }

    private func text(_ entry: Widget) -> String { string(gtk_editable_get_text(op(entry))) }

    /// The strength as it is typed, and whether the two fields agree.
    private func judge() {
        let first = text(pin)
        let second = text(repeatPIN)
        var ready = false
        if first.isEmpty {
            setText(strength, "At least 4 characters")
        } else if first.count < LockedVault.minimumPINLength {
            setText(strength, "Too short: at least \(LockedVault.minimumPINLength) characters")
        } else if Strength.isCommonPIN(first) {
            setText(strength, "That PIN is one of the first a thief tries (a common PIN, one digit repeated or digits in a row): choose another")
        } else {
            let bits = Strength.bits(first)
            let verdict = bits < 30 ? "Weak" : bits < Strength.archiveFloor ? "Fair" : "Strong"
            var line = "\(verdict) (about \(Int(bits)) bits): a thief with a copy of this computer's disk needs "
                + Strength.offlineTime(bits: bits, parameters: KDFParameters(iterations: 3, memoryKiB: 256 * 1024))
                + " to try every candidate"
            if second.isEmpty {
                line += ". Type it again below"
            } else if second != first {
                line += ". The two do not match yet"
            } else if backupChoice == nil {
                line += ". Choose whether to back up the vault folder"
            } else {
                ready = true
            }
            setText(strength, line)
        }
        gtk_widget_set_sensitive(createButton, ready && !busy ? 1 : 0)
    }

    /// The person's answer to the backup question; nil until one is chosen.
    private var backupChoice: Bool? {
        gtk_check_button_get_active(typed(backupYes)) != 0 ? true : gtk_check_button_get_active(typed(backupNo)) != 0 ? false : nil
    }

    private func submit() {
        guard !busy, let allowBackups = backupChoice, text(pin) == text(repeatPIN), let raw = gtk_editable_get_text(op(pin)), strlen(raw) >= 4 else { return }
        let secret = SecretBytes(copying: UnsafeRawBufferPointer(start: raw, count: strlen(raw)))
        for entry in [pin, repeatPIN] { gtk_editable_set_text(op(entry), "") }
        busy = true
        gtk_widget_set_sensitive(createButton, 0)
        setText(strength, "Creating the vault (measuring this computer for the key derivation)…")
        app.session.create(pin: secret, allowBackups: allowBackups) { [weak self] result in
            guard let self else { return }
            busy = false
            switch result {
            case .success(let phrase):
                app.showPhrase(phrase, backups: allowBackups)
            case .failure(let error):
                setText(strength, describe(error))
                judge()
            }
        }
    }
}

/// The recovery phrase, once, after the vault is made: what it opens, what to back up (as the
/// person chose), and a box to tick before going on. The phrase is never stored; the label is
/// cleared on leaving. It is shown unselected and cannot be selected (issue 56: a selected label
/// put it in the X11 PRIMARY selection, which clipboard managers keep): it reaches the clipboard
/// only through "Copy", and is cleared from there after `clearAfter` seconds or on leaving, as
/// KeePassXC does — unless another program has taken the clipboard meanwhile.
@MainActor
final class PhraseScreen {
    static let clearAfter: UInt32 = 10
    let root: Widget
    private let words: Widget
    private var copied = false

    init(app: App, phrase: String, backups: Bool) {
        let location = app.session.locked.location
        let title = label("Your recovery phrase", style: "title-1")
        words = label(phrase, style: "title-3")
        gtk_label_set_selectable(op(words), 0)
        gtk_widget_add_css_class(words, "monospace")
        let about = label("""
            Write it on paper now and keep it away from this computer: it is shown only this once. With \
            the vault folder alone, it opens everything in your vault if this computer, its key store or \
            your PIN is lost. Whoever has both can read your vault.
            """, wrap: true)
        let backup = label(Self.backupText(backups, location: location), style: "dim-label", wrap: true)
        for l in [about, backup] { gtk_label_set_max_width_chars(op(l), 52) }
        let copyNote = label("", style: "caption", wrap: true)
        let check = must(gtk_check_button_new_with_label("I have written down the recovery phrase"))
        n11g_set_label(check, "I have written down the recovery phrase")
        var proceed: Widget?
        let copy = button("Copy", name: "Copy the recovery phrase", style: "flat") {}
        let continueButton = button("Open the vault", name: "Open the vault", style: "suggested-action") {}
        proceed = continueButton
        gtk_widget_set_sensitive(continueButton, 0)
        on(raw(check), "toggled") {
            gtk_widget_set_sensitive(continueButton, gtk_check_button_get_active(typed(check)))
        }
        let column = box(true, spacing: 14, [title, words, copy, copyNote, about, backup, check, continueButton])
        root = scrolledPage(flatHeader(nil), column)
        on(raw(copy), "clicked") { [unowned self] in
            gdk_clipboard_set_text(gtk_widget_get_clipboard(words), phrase)
            copied = true
            setText(copyNote, "Copied. The clipboard is cleared in \(Self.clearAfter) seconds.")
            every(milliseconds: Self.clearAfter * 1000) { [weak self] in
                self?.clearClipboard()
                setText(copyNote, "The clipboard was cleared.")
                return false
            }
        }
        on(raw(continueButton), "clicked") { [unowned self] in
            clearClipboard()
            setText(words, "")
            if let proceed { gtk_widget_set_sensitive(proceed, 0) }
            app.unlocked(role: .primary)
        }
    }

    /// Empties the clipboard if it still holds what "Copy" put there.
    private func clearClipboard() {
        guard copied else { return }
        copied = false
        let clipboard = gtk_widget_get_clipboard(words)
        if gdk_clipboard_is_local(clipboard) != 0 { gdk_clipboard_set_content(clipboard, nil) }
    }

    /// What to back up, as the person chose when the vault was made (the setting and `status`
    /// say the same).
    static func backupText(_ backups: Bool, location: VaultLocation) -> String {
        backups
            ? "What to back up: the vault folder (\(location.vaultRoot)), as often as you like — it holds only encrypted data, "
              + "and a restored snapshot with this phrase brings back everything in it, even items deleted after that snapshot. "
              + "Never the key store (\(location.keyStoreRoot)): it carries a CACHEDIR.TAG, so give restic and borg --exclude-caches "
              + "(the README has the commands)."
            : "The vault folder (\(location.vaultRoot)) is kept out of backups, as you chose: if this disk is lost, so is the vault. "
              + "\"Allow backups of the vault folder\" in the settings changes that. Never back up the key store (\(location.keyStoreRoot))."
    }
}
