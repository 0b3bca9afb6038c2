// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format

/// The settings as GNOME preferences (issue 33): human labels, a switch for what is on or
/// off (applied at once), an entry row with an apply button for amounts and durations, each
/// validated where it is typed (a refused value marks its row and says why beneath).
/// The keys stay the CLI's (`nu11vlt settings set KEY`), shown as each row's tooltip.
enum SettingWords {
    enum Kind {
        /// A switch: the value when on, and when off.
        case toggle(on: String, off: String)
        case text
    }

    /// The order of the rows: what people change most first.
    static let order = ["lock.idle", "deletion.mode", "export.strip_location", "backup.allow", "fade.default", "pin.erase_after",
                        "keys.rotate_days", "kdf.memory_mib", "kdf.iterations", "preview.cache_mib", "log.max_kib"]

    static var ordered: [Settings.Definition] {
        Settings.definitions.sorted { (order.firstIndex(of: $0.key) ?? order.count) < (order.firstIndex(of: $1.key) ?? order.count) }
    }

    static func describe(_ key: String) -> (title: String, subtitle: String, kind: Kind) {
        switch key {
        case "deletion.mode": ("Delete securely", "Overwrite an item's file before its key is destroyed (slower; SSDs may keep old blocks)", .toggle(on: "secure", off: "standard"))
        case "fade.default": ("Default fade time", "How long a fade item lives when no time is chosen (e.g. 30s, 10m, 24h, 7d)", .text)
        case "kdf.memory_mib": ("Key derivation memory (MiB)", "Argon2id memory, applied at the next PIN change; 0 keeps it", .text)
        case "kdf.iterations": ("Key derivation passes", "Argon2id passes, applied at the next PIN change; 0 keeps them", .text)
        case "pin.erase_after": ("Erase after wrong PINs", "Erase the vault after this many wrong PINs in a row; 0 = never", .text)
        case "preview.cache_mib": ("Preview memory (MiB)", "Memory for decrypted previews while the vault is open", .text)
        case "backup.allow": ("Allow backups of the vault folder", "Backup tools may copy the (encrypted) vault folder; the key store never", .toggle(on: "true", off: "false"))
        case "export.strip_location": ("Remove location when exporting", "Take the GPS position out of photos on every export", .toggle(on: "true", off: "false"))
        case "keys.rotate_days": ("Rotate keys every (days)", "New keys at the first unlock after this many days; 0 = never", .text)
        case "log.max_kib": ("Audit log size (KiB)", "Older entries become a checkpoint beyond this", .text)
        case "lock.idle": ("Lock after", "Lock after this long without input (e.g. 30s, 5m, 1h); 0 = never", .text)
        default: (key, "", .text)
        }
    }
}

/// The rows of the "Vault" preferences group.
@MainActor
final class SettingRows {
    let group: Widget
    /// Under the group: the last refusal, in words.
    let status: Widget
    private var rows: [String: Widget] = [:]
    private var switches: [String: Widget] = [:]
    private var loading = false
    private let apply: (String, String) -> Void

    init(apply: @escaping (String, String) -> Void) {
        self.apply = apply
        group = must(adw_preferences_group_new())
        adw_preferences_group_set_title(typed(group), "Vault")
        status = label("", style: "error", wrap: true)
        gtk_widget_set_halign(status, GTK_ALIGN_START)
        n11g_set_label(status, "Settings status")
        for definition in SettingWords.ordered {
            let words = SettingWords.describe(definition.key)
            switch words.kind {
            case .toggle(let onValue, let offValue):
                let row = must(adw_action_row_new())
                adw_preferences_row_set_title(typed(row), words.title)
                adw_action_row_set_subtitle(typed(row), words.subtitle)
                let toggle = must(gtk_switch_new())
                gtk_widget_set_valign(toggle, GTK_ALIGN_CENTER)
                adw_action_row_add_suffix(typed(row), toggle)
                adw_action_row_set_activatable_widget(typed(row), toggle)
                on(raw(toggle), "notify::active") { [unowned self] in
                    guard !loading else { return }
                    self.apply(definition.key, gtk_switch_get_active(op(toggle)) != 0 ? onValue : offValue)
                }
                gtk_widget_set_tooltip_text(row, "nu11vlt settings set \(definition.key) \(definition.allowed)")
                switches[definition.key] = toggle
                rows[definition.key] = row
                adw_preferences_group_add(typed(group), row)
            case .text:
                let row = must(adw_entry_row_new())
                adw_preferences_row_set_title(typed(row), words.title)
                adw_entry_row_set_show_apply_button(typed(row), 1)
                gtk_widget_set_tooltip_text(row, words.subtitle + " — nu11vlt settings set \(definition.key)")
                on(raw(row), "apply") { [unowned self] in self.apply(definition.key, string(gtk_editable_get_text(op(row)))) }
                on(raw(row), "entry-activated") { [unowned self] in self.apply(definition.key, string(gtk_editable_get_text(op(row)))) }
                rows[definition.key] = row
                adw_preferences_group_add(typed(group), row)
            }
        }
    }

    /// Shows the settings as they are (no row reacts to being set here).
    func show(_ settings: Settings) {
        loading = true
        defer { loading = false }
        for definition in Settings.definitions {
            let value = (try? settings.value(definition.key)) ?? ""
            if let toggle = switches[definition.key], case .toggle(let onValue, _) = SettingWords.describe(definition.key).kind {
                gtk_switch_set_active(op(toggle), value == onValue ? 1 : 0)
            } else if let row = rows[definition.key] {
                gtk_editable_set_text(op(row), value)
            }
            if let row = rows[definition.key] { gtk_widget_remove_css_class(row, "error") }
        }
    }

    /// A value was refused: its row is marked and the reason is said beneath; the shown value
    /// goes back to what is stored.
    func refused(_ key: String, _ reason: String, settings: Settings?) {
        if let settings { show(settings) }
        if let row = rows[key] { gtk_widget_add_css_class(row, "error") }
        setText(status, reason)
    }

    func accepted(_ key: String, _ settings: Settings) {
        show(settings)
        setText(status, "")
        let title = SettingWords.describe(key).title
        setText(status, "\(title): \((try? settings.value(key)) ?? "")")
        gtk_widget_remove_css_class(status, "error")
    }
}
