// SPDX-License-Identifier: GPL-3.0-or-later
/// What this build of Nu11VLT is: its name, version (from the VERSION file, stamped at build
/// time by the VersionStamp plugin) and license, for `--version`, the man page and the app's
/// About window.
public enum Nu11Release {
    public static let name = "Nu11VLT"
    /// SPDX identifier of the project's license (LICENSE).
    public static let license = "GPL-3.0-or-later"
    public static let copyright = "© 2026 the Nu11VLT authors"
}
