// SPDX-License-Identifier: GPL-3.0-or-later
// The release version lives in one place, the VERSION file at the top of the project. This
// build-tool plugin turns it into `Nu11Release.version` for every target that uses it (the
// CLI's --version and man page, the app's About window); the package and the metainfo are
// checked against the same file (scripts/make-deb.sh, CommandTests, Tests/Package).
import PackagePlugin

@main
struct VersionStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let version = context.package.directoryURL.appending(path: "VERSION")
        let output = context.pluginWorkDirectoryURL.appending(path: "Version.swift")
        return [
            .buildCommand(
                displayName: "Stamping the version from VERSION",
                executable: try context.tool(named: "nu11vlt-version-stamp").url,
                arguments: [version.path, output.path],
                inputFiles: [version],
                outputFiles: [output]
            ),
        ]
    }
}
