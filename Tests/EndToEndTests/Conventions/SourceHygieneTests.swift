// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Library code: no force unwrap, `try!`, `as!`, implicitly unwrapped optionals, and no
/// network code at all; layers import only the layers below them.
@Suite("source hygiene")
struct SourceHygieneTests {
    static let repo = Repo.root

    static func swiftFiles(_ target: String) throws -> [(String, String)] {
        let dir = repo.appendingPathComponent("Sources/\(target)")
        guard let walker = FileManager.default.enumerator(atPath: dir.path) else { return [] }
        var out: [(String, String)] = []
        while let rel = walker.nextObject() as? String {
            guard rel.hasSuffix(".swift") else { continue }
            out.append((target + "/" + rel, try String(contentsOf: dir.appendingPathComponent(rel), encoding: .utf8)))
        }
        return out
    }

    @Test("no force unwrap, try!, as!, IUO or networking in Sources")
    func noForceOrNetwork() throws {
        let forbidden = ["try!", "as!", "FoundationNetworking", "URLSession", "import Network"]
        // socket( and connect( as calls of their own: not the tail of a longer name such as
        // g_signal_handler_disconnect( (GLib's signal API, no network).
        let netCall = try Regex("(^|[^A-Za-z0-9_])(socket|connect|socketpair|sendto|recvfrom)\\(")
        for caught in ["let fd = socket(AF_INET, 1, 0)", "connect(fd, p, n)", "_ = Glibc.connect(fd, p, n)", "if sendto(fd"] {
            #expect(caught.firstMatch(of: netCall) != nil, "misses: \(caught)")
        }
        for fine in ["g_signal_handler_disconnect(clock, h)", "reconnect(x)", "g_object_bind_property(a)"] {
            #expect(fine.firstMatch(of: netCall) == nil, "flags: \(fine)")
        }
        // A `!` after a name, `)` or `]` that is not `!=` — also at the end of a line.
        let bang = try Regex("[A-Za-z0-9_)\\]]!([^=]|$)")
        // The rule itself: it must catch these and let these pass.
        for caught in ["let x = y!", "f()!.g", "a[0]!", "x! + 1"] { #expect(caught.firstMatch(of: bang) != nil, "misses: \(caught)") }
        for fine in ["a != b", "!flag", "x != nil"] { #expect(fine.firstMatch(of: bang) == nil, "flags: \(fine)") }
        var checked = 0
        for target in ["Nu11Format", "Nu11Storage", "Nu11Vault", "nu11vlt", "nu11vlt-app"] {
            for (name, text) in try Self.swiftFiles(target) {
                checked += 1
                for line in text.split(separator: "\n") {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    let withoutStrings = code.replacing(try Regex("\"[^\"]*\""), with: "\"\"")
                    for word in forbidden { #expect(!withoutStrings.contains(word), "\(name): \(line)") }
                    #expect(withoutStrings.firstMatch(of: netCall) == nil, "\(name): a socket call: \(line)")
                    #expect(withoutStrings.firstMatch(of: bang) == nil, "\(name): force unwrap or IUO: \(line)")
                }
            }
        }
        #expect(checked > 20)
    }

    @Test("a lower layer never imports a higher one")
    func layering() throws {
        let rules: [String: [String]] = [
            "Nu11Format": ["Nu11Storage", "Nu11Vault", "ArgumentParser", "GRDB"],
            "Nu11Storage": ["Nu11Vault", "ArgumentParser"],
            "Nu11Vault": ["ArgumentParser", "CGtk"],
            "Nu11Media": ["CGtk", "Nu11Vault"],
        ]
        for (target, banned) in rules {
            for (name, text) in try Self.swiftFiles(target) {
                for module in banned { #expect(!text.contains("import \(module)"), "\(name) imports \(module)") }
            }
        }
        // The chunk cipher's backend stays behind one folder: OpenSSL's C face is imported there only.
        var backend: [String] = []
        for (name, text) in try Self.swiftFiles("Nu11Format") where text.contains("import CNu11Cipher") { backend.append(name) }
        #expect(!backend.isEmpty && backend.allSatisfy { $0.contains("/Chunked/OpenSSL/") }, "CNu11Cipher imported outside Chunked/OpenSSL: \(backend)")
    }

    @Test("the binary links no networking library")
    func ldd() throws {
        let cli = try CLI()
        // The debug build too: the release build links the Swift libraries statically.
        let dirs = Set([GUITests.binDir, (CLI.bundled as NSString).deletingLastPathComponent])
        for binary in dirs.sorted().flatMap({ [$0 + "/nu11vlt", $0 + "/nu11vlt-app"] }) {
            let r = try cli.spawn("/usr/bin/ldd", [binary])
            #expect(r.code == 0)
            for lib in ["FoundationNetworking", "libcurl", "libnghttp", "libssl", "libsoup", "libwebkit"] {
                #expect(!r.out.contains(lib), "\(binary) links \(lib)")
            }
        }
    }
}

extension SourceHygieneTests {
    /// Every source file says its license in its first lines (GPL-3.0-or-later, as LICENSE);
    /// the test vectors and fuzz corpora, which are data, are left out.
    @Test("every source file carries an SPDX license header")
    func spdxHeaders() throws {
        let root = Self.repo.path
        let sources: Set<String> = ["swift", "c", "h", "py", "sh", "modulemap"]
        let scripts = ["bench/run", ".ci/run", "Makefile"]
        var checked = 0
        var missing: [String] = []
        for top in ["Sources", "Tests", "Plugins", "scripts", "tools", "bench", "Package.swift"] + scripts {
            var paths: [String] = []
            if let walker = FileManager.default.enumerator(atPath: root + "/" + top) {
                while let rel = walker.nextObject() as? String {
                    let ext = (rel as NSString).pathExtension
                    guard sources.contains(ext), !rel.contains("Vectors/"), !rel.contains("__pycache__") else { continue }
                    paths.append(top + "/" + rel)
                }
            } else {
                paths.append(top)
            }
            for path in paths {
                let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
                let head = text.split(separator: "\n", maxSplits: 3).prefix(3).joined(separator: "\n")
                checked += 1
                if !head.contains("SPDX-License-Identifier: GPL-3.0-or-later") { missing.append(path) }
            }
        }
        #expect(checked > 200, "only \(checked) files checked")
        #expect(missing.isEmpty, "no SPDX header in: \(missing.joined(separator: ", "))")
    }
}

extension SourceHygieneTests {
    /// The core names no command and no flag in what it tells a person: its remedies are typed
    /// (`Remedy`), and each front end words them (the CLI in Support/Remedies.swift).
    @Test("no remedy or notice in the core layers names a CLI command or flag")
    func noCLIWordsInCoreRemedies() throws {
        let cliWords = try Regex(#"`nu11vlt|nu11vlt (init|tpm|pin|skeleton|archive|export|import|list|check|wipe|recover|status|settings|rekey)\b|--(vault|keystore|force|json|secure|tpm|kdf|pin)"#)
        for caught in ["remedy: \"run `nu11vlt check`\"", "remedy: \"choose another --vault\"", "remedy: \"see nu11vlt tpm status\""] {
            #expect(caught.firstMatch(of: cliWords) != nil, "misses: \(caught)")
        }
        #expect("remedy: \"not a Nu11VLT archive\"".firstMatch(of: cliWords) == nil)
        var checked = 0
        for target in ["Nu11Format", "Nu11Storage", "Nu11Vault", "Nu11Media"] {
            for (name, text) in try Self.swiftFiles(target) {
                for line in text.split(separator: "\n")
                where line.contains("remedy:") || line.contains("Notice(message:") || line.contains("notice(\"") {
                    checked += 1
                    #expect(line.firstMatch(of: cliWords) == nil, "\(name): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(checked > 100, "only \(checked) remedies found")
    }

    /// `Remedy` is a closed set: the core builds typed cases (`Advice` for the plain ones), and
    /// `.frontEnd(text)` is for a front end's own errors only. The compiler refuses a string
    /// where a remedy goes; this refuses the one case that carries text, in the core.
    @Test("the core's remedies are typed: no layer under the front ends builds a .frontEnd remedy")
    func coreRemediesAreClosed() throws {
        func builds(_ line: Substring) -> Bool { line.contains(".frontEnd(") && !line.contains("case .frontEnd(let ") }
        #expect(builds("throw Nu11Error(.io, \"x\", remedy: .frontEnd(\"pass --force\"))") && !builds("        case .frontEnd(let text): text"))
        var found: [String] = []
        var typed = 0
        for target in ["Nu11Format", "Nu11Storage", "Nu11Vault", "Nu11Media"] {
            for (name, text) in try Self.swiftFiles(target) {
                for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    if builds(line) { found.append("\(name): \(line.trimmingCharacters(in: .whitespaces))") }
                    if line.contains("remedy: .") { typed += 1 }
                }
            }
        }
        #expect(typed > 150, "only \(typed) typed remedies found")
        #expect(found.isEmpty, "free-text remedies in the core: \(found.joined(separator: "; "))")
    }
}

extension SourceHygieneTests {
    /// Every string literal of the core, not only remedies: none says `nu11vlt ` (the CLI's
    /// name, a command) or a `--flag`. The product is Nu11VLT; `.nu11vlt` is the archive
    /// extension; a domain-separation label ("nu11vlt kek v1") is a constant, not words.
    @Test("no string literal in Format, Storage, Media or Vault names the CLI or a flag")
    func noCLIWordsInCoreStrings() throws {
        let literal = try Regex(#""((?:[^"\\]|\\.)*)""#)
        let label = try Regex(#"^nu11vlt [a-z0-9 ]*(\\\([a-z]+\))?[a-z0-9 ]*$"#)
        let cli = try Regex(#"(^|[^.\w])nu11vlt |(^|[^\w-])--[a-z]"#)
        for (text, caught) in [("\"run nu11vlt check\"", true), ("\"pass --force\"", true), ("\"a .nu11vlt file\"", false),
                               ("Array(\"nu11vlt kek v1\".utf8)", false), ("\"nu11vlt subkey v1 \\(purpose)\"", false),
                               ("\"the next nu11vlt command\"", true)] {
            let hit = text.matches(of: literal).contains { m in
                let inner = String(text[m.range].dropFirst().dropLast())
                return inner.firstMatch(of: label) == nil && inner.firstMatch(of: cli) != nil
            }
            #expect(hit == caught, "the check is wrong about \(text)")
        }
        // Multi-line literals ("""…"""), line by line: the same rule.
        let block = try Regex(#"\"\"\"\n((?:.|\n)*?)\"\"\""#)
        let sample = "let x = \"\"\"\n    then run nu11vlt check\n    \"\"\"\n"
        #expect(sample.matches(of: block).count == 1 && sample.contains("nu11vlt check"), "the block check finds no block")
        var checked = 0
        var found: [String] = []
        for target in ["Nu11Format", "Nu11Storage", "Nu11Vault", "Nu11Media"] {
            for (name, text) in try Self.swiftFiles(target) {
                for m in text.matches(of: block) {
                    for inner in text[m.range].split(separator: "\n").dropFirst().dropLast() {
                        checked += 1
                        if inner.firstMatch(of: cli) != nil { found.append("\(name): \(inner)") }
                    }
                }
                for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    for m in line.matches(of: literal) {
                        checked += 1
                        let inner = String(line[m.range].dropFirst().dropLast())
                        if inner.firstMatch(of: label) == nil && inner.firstMatch(of: cli) != nil {
                            found.append("\(name): \(inner)")
                        }
                    }
                }
            }
        }
        #expect(checked > 1000, "only \(checked) string literals found")
        #expect(found.isEmpty, "CLI words in the core's strings: \(found.joined(separator: "; "))")
    }
}

extension SourceHygieneTests {
    /// The app's strings come from the app: it words every remedy in Words.swift (a switch
    /// without `default`, so a new remedy fails the build until it is worded) and never shows
    /// the core's own rendering of an error (`description`, string interpolation of an error).
    @Test("the app words errors and remedies itself")
    func appWordsItsOwnErrors() throws {
        let files = try Self.swiftFiles("nu11vlt-app")
        let words = try #require(files.first { $0.0.hasSuffix("/Words.swift") }?.1, "no Words.swift in the app")
        #expect(!words.contains("default:"), "Words.remedy has a default case")
        for (name, text) in files {
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect(!line.contains(".description") && !line.contains("(hint:"), "\(name): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }

    @Test("the app's threading model is the compiler's: UI types are @MainActor, the one @unchecked Sendable is the justified TextureBox, nothing is nonisolated(unsafe)")
    func appThreadingIsChecked() throws {
        let files = try Self.swiftFiles("nu11vlt-app")
        var unchecked: [String] = []
        for (name, text) in files {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for (i, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect(!line.contains("nonisolated(unsafe)"), "\(name): \(line)")
                if line.contains("@unchecked Sendable") {
                    unchecked.append(line.trimmingCharacters(in: .whitespaces))
                    #expect(i > 0 && lines[i - 1].contains("///") && lines[..<i].suffix(4).joined().contains("sound"),
                            "\(name): an @unchecked Sendable without the comment that says why it is sound")
                }
                // Every class of the UI (it holds GTK widgets) is isolated to the main actor.
                if line.hasPrefix("final class "), !line.contains(": Sendable"), !line.contains("@unchecked Sendable"),
                   !line.contains("ClosureBox") {
                    #expect(i > 0 && lines[i - 1].contains("@MainActor"), "\(name): \(line) is not @MainActor")
                }
            }
        }
        #expect(unchecked == ["final class TextureBox: @unchecked Sendable {"], "\(unchecked)")
    }

    @Test("every command names itself: without commandName, ArgumentParser derives each name from its type at every start (milliseconds of runtime type lookups per run)")
    func commandsNameThemselves() throws {
        var configurations = 0
        for (name, text) in try Self.swiftFiles("nu11vlt") {
            var rest = Substring(text)
            while let start = rest.range(of: "CommandConfiguration(") {
                configurations += 1
                let call = rest[start.upperBound...].prefix(200)
                #expect(call.drop { $0 == " " || $0 == "\n" }.hasPrefix("commandName:"),
                        "\(name): a CommandConfiguration without commandName: \(call.prefix(60))")
                rest = rest[start.upperBound...]
            }
        }
        #expect(configurations > 50, "only \(configurations) commands found")
    }
}
