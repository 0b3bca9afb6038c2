// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Nu11VLT as a user who installs it meets it: Tests/Package/run.sh builds the .deb from the
/// release build (lintian: no error), installs it with apt-get, runs the demo's main steps
/// against /usr/bin/nu11vlt and starts /usr/bin/nu11vlt-app to its unlock screen and About
/// window with the Swift toolchain and the build folder hidden, checks that the four
/// versions agree with VERSION, and removes it again, leaving nothing behind. `make test`
/// starts it in the background after the release build; `swift test` alone runs it when a
/// release build of this version is there.
@Suite("the Debian package")
struct PackageTests {
    static var releaseBuilt: Bool {
        guard let version = try? String(contentsOfFile: GUITests.repo + "/VERSION", encoding: .utf8) else { return false }
        let cli = GUITests.repo + "/.build/release/nu11vlt"
        guard FileManager.default.isExecutableFile(atPath: cli), let r = try? CLI().spawn(cli, ["--version"]) else { return false }
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines) == version.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("make-deb + lintian; apt-get install; without the toolchain: init, import with a thumbnail from the packaged helper, list, export byte-identical, the app's unlock screen and About; one version in five places; remove --purge leaves nothing",
          .timeLimit(.minutes(20)))
    func installUseRemove() async throws {
        let (code, output): (Int32, String)
        if let result = try await BackgroundHarness(name: "package-test").result() {
            (code, output) = result
        } else {
            try #require(Self.releaseBuilt, "the package test needs the release build of this version: make release (make test builds it)")
            let r = try CLI().spawn("/bin/sh", [GUITests.repo + "/Tests/Package/run.sh"])
            (code, output) = (r.code, r.out + "\n" + r.stderr)
        }
        #expect(code == 0, "package test failed:\n\(output.suffix(6000))")
        #expect(output.contains("lintian: no errors"))
        #expect(output.contains("about: " + (try String(contentsOfFile: GUITests.repo + "/VERSION", encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(output.contains("none left; the installed packages are those from before"))
        #expect(output.contains("package: PASS"))
    }

    /// `make demo` installs build and runtime dependencies only; test tools come with
    /// `make test`; nothing installs Python packages outside Debian.
    @Test("make demo installs no test-only package; no pip anywhere")
    func setUpInstallsOnlyWhatItNeeds() throws {
        let cli = try CLI()
        let list = try cli.spawn("/bin/sh", [GUITests.repo + "/scripts/ensure-deps.sh", "--list", "build"])
        #expect(list.code == 0)
        let demo = Set(list.out.split(separator: "\n").map(String.init))
        #expect(demo.contains("libsodium-dev") && demo.contains("libadwaita-1-dev"), "the build list: \(demo.sorted())")
        let testOnly = ["swtpm", "swtpm-tools", "tpm2-tools", "xvfb", "dbus-x11", "xdotool", "python3-pyatspi", "at-spi2-core",
                        "fish", "tmux", "vim", "faketime", "restic", "strace", "lintian", "dpkg-dev", "appstream",
                        "desktop-file-utils", "python3-pil", "libvips-tools", "libheif-examples", "man-db", "sqlite3"]
        #expect(demo.intersection(testOnly).isEmpty, "make demo would install test tools: \(demo.intersection(testOnly).sorted())")
        let test = try cli.spawn("/bin/sh", [GUITests.repo + "/scripts/ensure-deps.sh", "--list", "test"])
        let all = Set(test.out.split(separator: "\n").map(String.init))
        #expect(all.isSuperset(of: demo) && all.isSuperset(of: testOnly), "make test installs the test tools: missing \(Set(testOnly).subtracting(all).sorted())")
        // No Python package from outside Debian, in any script, Makefile or test.
        let grep = try cli.spawn("/bin/grep", ["-rlE", "pip3? install|--break-system-packages|ensurepip",
                                               GUITests.repo + "/scripts", GUITests.repo + "/Makefile", GUITests.repo + "/Tests",
                                               GUITests.repo + "/tools", GUITests.repo + "/bench", GUITests.repo + "/.ci",
                                               "--exclude=PackageTests.swift"])
        #expect(grep.out.isEmpty, "Python packages installed from outside Debian in: \(grep.out)")
    }
}
