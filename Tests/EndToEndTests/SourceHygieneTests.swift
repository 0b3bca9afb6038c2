// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Library code: no force unwrap, `try!`, `as!`, implicitly unwrapped optionals, and no
/// network code at all; layers import only the layers below them.
@Suite("source hygiene")
struct SourceHygieneTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

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
        let forbidden = ["try!", "as!", "FoundationNetworking", "URLSession", "import Network", "socket(", "connect("]
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
    }

    @Test("the binary links no networking library")
    func ldd() throws {
        let cli = try CLI()
        for binary in [CLI.binary, GUITests.binDir + "/nu11vlt-app"] {
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
}
