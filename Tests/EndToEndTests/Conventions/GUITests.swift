// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The desktop app, driven for real: Tests/GUI/run.sh starts a private X server (Xvfb) and
/// session bus, and Tests/GUI/gui_test.py walks the user's story through the accessibility
/// tree (AT-SPI) and the keyboard (xdotool). The screenshots it takes are those in
/// docs/screenshots (copied from .build/<config>/gui-screenshots after a run).
@Suite("desktop app")
struct GUITests {
    static let repo = Repo.root.path
    /// The debug build's folder, as `make test` runs the GUI test there: the story enrols a
    /// software security key, whose unix: socket only a debug build takes.
    static var binDir: String { URL(fileURLWithPath: CLI.bundled).deletingLastPathComponent().path }

    @Test("unlock, import three photos, named tiles, viewer, export, archive, notes, fade, lock, Skeleton Switch, duress PIN, settings, idle lock, backup PIN, wrong-PIN countdown; no plaintext left, no recent files, AF_UNIX only",
          .timeLimit(.minutes(20)))
    func userStory() async throws {
        let app = Self.binDir + "/nu11vlt-app"
        try #require(FileManager.default.isExecutableFile(atPath: app), "nu11vlt-app was not built")
        let (code, output) = try await Self.startedByMake() ?? Self.runInline()
        #expect(code == 0, "GUI test failed:\n\(output.suffix(6000))")
        #expect(output.contains("gui: PASS"))
        #expect(output.contains("all AF_UNIX"))
    }

    static func runInline() throws -> (Int32, String) {
        let cli = try CLI()
        let r = try cli.spawn("/bin/sh", [repo + "/Tests/GUI/run.sh", binDir, binDir + "/gui-screenshots"])
        return (r.code, r.out + "\n" + r.stderr)
    }

    /// `make test` starts the GUI test before the suite (.build/gui-test.started, then .log and
    /// .rc): its result, waited for and consumed, so a later `swift test` runs it afresh.
    static func startedByMake() async throws -> (Int32, String)? {
        try await BackgroundHarness(name: "gui-test").result()
    }

    @Test("the desktop entry and AppStream metainfo validate; the icon is there")
    func desktopFiles() throws {
        let cli = try CLI()
        let data = Self.repo + "/data/"
        let appstream = try cli.spawn("/usr/bin/appstreamcli", ["validate", "--no-net", data + "org.nu11vlt.Nu11VLT.metainfo.xml"])
        #expect(appstream.code == 0, "appstreamcli: \(appstream.out) \(appstream.stderr)")
        let desktop = try cli.spawn("/usr/bin/desktop-file-validate", [data + "org.nu11vlt.Nu11VLT.desktop"])
        #expect(desktop.code == 0 && !desktop.out.contains("error"), "desktop-file-validate: \(desktop.out) \(desktop.stderr)")
        #expect(FileManager.default.fileExists(atPath: data + "icons/hicolor/scalable/apps/org.nu11vlt.Nu11VLT.svg"))
    }

    @Test("bad arguments: one line and exit 2, before any window")
    func badArguments() throws {
        let cli = try CLI()
        let r = try cli.spawn(Self.binDir + "/nu11vlt-app", ["--vault"], environment: ["DISPLAY": ""])
        #expect(r.code == 2)
        #expect(r.stderr.contains("--vault needs a folder"))
        #expect(r.stderr.split(separator: "\n").count == 1)
        let unknown = try cli.spawn(Self.binDir + "/nu11vlt-app", ["--frobnicate"], environment: ["DISPLAY": ""])
        #expect(unknown.code == 2 && unknown.stderr.contains("unknown option '--frobnicate'"))
    }
}
