// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The project's own files, for tests that read the docs, tools and fixtures: found from the
/// root (where Package.swift is), so a test file can live in any folder.
public enum Repo {
    public static let root: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
            dir.deleteLastPathComponent()
        }
        return dir
    }()

    /// `relative` under the root, as a path.
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}
