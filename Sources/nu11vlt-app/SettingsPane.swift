// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// Settings: the typed settings as preferences rows (`SettingRows`), backup and duress PINs, the
/// Skeleton Switch (status, arm with confirmation, check-in, disarm), the TPM's status, the
/// PIN change and the albums (`AlbumRows`: rename, delete).
@MainActor
final class SettingsPane {
    unowned let screen: MainScreen
    let root: Widget
    private let rows: SettingRows
    private let status: Widget
    private let skeleton: Widget
    private let tpm: Widget
    /// settings.apply(KEY), .set-backup-pin, .set-duress-pin, .arm, .check-in, .disarm: the
    /// switch's actions follow its state (a switch that is off has nothing to check in or disarm).
    private let actions: Actions
    private let albums: AlbumRows

    init(screen: MainScreen) {
        self.screen = screen
        var applyBox: ((String, String) -> Void)?
        rows = SettingRows { key, value in applyBox?(key, value) }
        status = rows.status
        skeleton = label("", wrap: true)
        n11g_set_label(skeleton, "Skeleton Switch status")
        tpm = label("", wrap: true)
        n11g_set_label(tpm, "TPM status")
        albums = AlbumRows(screen: screen)
        let pins = box(false, spacing: 8)
        let switchRow = box(false, spacing: 8)
        let page = box(true, spacing: 12, [label("Settings", style: "title-2"), rows.group, status,
                                           label("PINs", style: "title-3"), pins,
                                           label("Skeleton Switch", style: "title-3"), skeleton, switchRow,
                                           label("TPM", style: "title-3"), tpm, albums.group])
        margins(page, 16)
        for w in [status, skeleton, tpm] { gtk_widget_set_halign(w, GTK_ALIGN_START) }
        let scroll = must(gtk_scrolled_window_new())
        gtk_scrolled_window_set_child(op(scroll), page)
        gtk_widget_set_vexpand(scroll, 1)
        root = scroll
        actions = Actions(on: scroll, prefix: "settings")
        actions.add("change-pin") { [unowned self] in self.changePIN() }
        actions.add("set-backup-pin") { [unowned self] in self.setPIN(backup: true) }
        actions.add("set-duress-pin") { [unowned self] in self.setPIN(backup: false) }
        actions.add("arm") { [unowned self] in self.arm() }
        actions.add("check-in") { [unowned self] in self.checkIn() }
        actions.add("disarm") { [unowned self] in
            self.run("Skeleton Switch disarmed") { try $0.profiles.disableSkeleton() }
        }
        for name in ["arm", "check-in", "disarm"] { actions.setEnabled(name, false) }  // until the status is read
        // What each PIN may set (as in the CLI): the primary PIN sets the backup PIN, the
        // backup PIN sets the duress PIN. A duress session looks like a backup session.
        append(pins, actions.button("Change PIN…", name: "Change PIN", action: "change-pin"))
        if screen.app.role == .primary {
            append(pins, actions.button("Set backup PIN…", name: "Set backup PIN", action: "set-backup-pin"))
        } else {
            append(pins, actions.button("Set duress PIN…", name: "Set duress PIN", action: "set-duress-pin"))
        }
        append(switchRow, actions.button("Arm…", name: "Arm Skeleton Switch", action: "arm"))
        append(switchRow, actions.button("Check in", name: "Skeleton check-in", action: "check-in"))
        append(switchRow, actions.button("Disarm", name: "Disarm Skeleton Switch", action: "disarm"))
        gtk_widget_set_size_request(page, 320, -1)  // with its margins, within a phone's 360 px
        applyBox = { [unowned self] key, value in self.apply(key, value) }
    }

    func reload() {
        screen.app.session.run({ vault -> (Settings, SkeletonStatus, String, [AlbumSummary]) in
            let settings = try LockedVault(vault.location).settings().settings
            let skeleton = vault.profiles.skeletonStatus()
            let tpm: String
            do {
                let s = try vault.profiles.keyStoreTPMStatus()
                tpm = !s.enrolled ? "Not bound to a TPM"
                    : "Bound to \(s.thisTPM == false ? "another" : "this") TPM" + (s.pcrs.map { ", PCRs \($0.map(String.init).joined(separator: ","))" } ?? "")
                        + (s.lockoutFailures.map { "; lockout failures \($0)/\(s.lockoutMaxTries ?? 0)" } ?? "")
                        + (s.problem.map { "; \($0)" } ?? "")
            } catch { tpm = describe(error) }
            return (settings, skeleton, tpm, try vault.albums.list())
        }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let (settings, switchStatus, tpmText, albumList)):
                rows.show(settings)
                albums.show(albumList)
                setText(skeleton, switchStatus.enabled
                        ? "Armed: wipes\(switchStatus.secure == true ? " (secure)" : "") after \(switchStatus.interval ?? "?") without a check-in; \(Countdown.text(Double(switchStatus.secondsLeft ?? 0))) left"
                        : "Off")
                actions.setEnabled("arm", !switchStatus.enabled)
                actions.setEnabled("check-in", switchStatus.enabled)
                actions.setEnabled("disarm", switchStatus.enabled)
                setText(tpm, tpmText)
            case .failure(let error): setText(status, describe(error))
            }
        }
    }

    private func apply(_ key: String, _ value: String) {
        screen.app.session.run({ vault in try vault.setSetting(key, value) }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let settings):
                rows.accepted(key, settings)
                if key == "lock.idle" { screen.app.idleLimit = settings.lockIdle }
            case .failure(let error):
                rows.refused(key, describe(error), settings: nil)
            }
        }
    }

    private func setPIN(backup: Bool) {
        let what = backup ? "backup" : "duress"
        screen.transfers.askPassword("Set the \(what) PIN", backup
            ? "The backup PIN opens a separate vault (the backup vault) and nothing else."
            : "The duress PIN opens an empty-looking vault and silently destroys the primary one.",
                                     confirm: true) { [unowned self] pin in
            run("The \(what) PIN is set") { vault in
                try LockedVault.validateNewPIN(pin)
                try Strength.refuseCommonPIN(pin)
                backup ? try vault.profiles.setBackupPIN(pin) : try vault.profiles.setDuressPIN(pin)
            }
        }
    }

    /// This session's own PIN (the primary's, or the backup's), asked twice; the vault's keys
    /// rotate with it, as `nu11vlt pin change` does.
    private func changePIN() {
        screen.transfers.askPassword("Change the PIN", "The new PIN (or passphrase) replaces the one you unlocked with. "
                                     + "The keys are rotated too, so an old copy of the key store opens nothing added after.",
                                     confirm: true) { [unowned self] pin in
            run("The PIN is changed") { vault in
                try Strength.refuseCommonPIN(pin)
                try vault.profiles.changePIN(new: pin)
            }
        }
    }

    private func arm() {
        screen.transfers.askText("Arm the Skeleton Switch", "Wipe the vault unless the primary PIN unlocks it within (e.g. 7d):",
                                 initial: "7d") { [unowned self] text in
            screen.confirm("Arm the Skeleton Switch?", "Without a check-in within \(text), the next unlock or start of Nu11VLT wipes the vault. There is no undo.",
                           action: "Arm") { [unowned self] in
                run("Skeleton Switch armed") { vault in try vault.profiles.enableSkeleton(interval: DurationText.parse(text), secure: false) }
            }
        }
    }

    /// A check-in re-arms the switch with its own interval from now.
    private func checkIn() {
        run("Checked in") { vault in try vault.profiles.skeletonCheckIn() }
    }

    private func run(_ done: String, _ work: @escaping @Sendable (Vault) throws -> Void) {
        screen.app.session.run(work) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success: setText(status, done)
            case .failure(let error): setText(status, describe(error))
            }
            reload()
        }
    }
}
