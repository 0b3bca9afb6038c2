// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Vault

@Suite("the import plan: one set of rules for the command line and the app")
struct ImportPlanTests {
    /// root/Trips/a, root/Trips/Rome/b, root/Trips/Rome/c, root/Trips/.DS_Store
    func tree(_ t: TestVault) throws -> String {
        let top = t.root + "/in/Trips"
        try FileManager.default.createDirectory(atPath: top + "/Rome", withIntermediateDirectories: true)
        for (name, byte) in [("a", 1), ("Rome/b", 2), ("Rome/c", 3), (".DS_Store", 4)] {
            FileManager.default.createFile(atPath: top + "/" + name, contents: Data([UInt8(byte)]))
        }
        return top
    }

    @Test("groups: consecutive files of one album, cut at the limit; litter listed, not imported")
    func groups() throws {
        let t = try TestVault()
        let top = try tree(t)
        let plan = try ImportPlan(paths: [top], recursive: true, albumsFromFolders: true, groupLimit: 1)
        #expect(plan.files.count == 3 && plan.skipped.map { ($0 as NSString).lastPathComponent } == [".DS_Store"])
        #expect(plan.groups.map(\.album) == ["Trips/Rome", "Trips/Rome", "Trips"], "cut at one file per group (sorted by name: Rome < a)")
        let wide = try ImportPlan(paths: [top], recursive: true, albumsFromFolders: true)
        #expect(wide.groups.map(\.album) == ["Trips/Rome", "Trips"] && wide.groups.map(\.files.count) == [2, 1])
        var fewer = wide
        fewer.remove([top + "/Rome/b", top + "/Rome/c"])
        #expect(fewer.groups.map(\.album) == ["Trips"] && fewer.missingAlbums(existing: []) == ["Trips"])
    }

    @Test("a folder walk takes regular files and folders only: symlinks (to a file or a folder), FIFOs and sockets are left")
    func walkTakesRegularFilesOnly() throws {
        let t = try TestVault()
        let top = try tree(t)
        let outside = t.root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: outside + "/secret", contents: Data([9]))
        try FileManager.default.createSymbolicLink(atPath: top + "/link-to-file", withDestinationPath: outside + "/secret")
        try FileManager.default.createSymbolicLink(atPath: top + "/link-to-folder", withDestinationPath: outside)
        #expect(mkfifo(top + "/fifo", 0o600) == 0)
        let socket = top + "/sock"
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in socket.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let plan = try ImportPlan(paths: [top], recursive: true)
        #expect(plan.files.map { String($0.dropFirst(top.count + 1)) } == ["Rome/b", "Rome/c", "a"])
    }

    @Test("a named album is never made by a plan (a typo fails); folder albums are; fade never goes into an album")
    func albums() throws {
        let t = try TestVault()
        let top = try tree(t)
        let vault = try t.vault
        let typo = try ImportPlan(paths: [top + "/a"], recursive: false, album: "Trps")
        try vault.items.prepare(typo)
        #expect(try vault.albums.list().isEmpty)
        #expect { _ = try vault.items.importGroup(typo.groups[0], of: typo) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        let folders = try ImportPlan(paths: [top], recursive: true, albumsFromFolders: true)
        try vault.items.prepare(folders)
        #expect(Set(try vault.albums.list().map(\.name)) == ["Trips", "Trips/Rome"])
        var imported: [ItemSummary] = []
        for group in folders.groups { imported += try vault.items.importGroup(group, of: folders) }
        #expect(imported.map(\.album) == ["Trips/Rome", "Trips/Rome", "Trips"])
        #expect { _ = try ImportPlan(paths: [top], recursive: true, album: "Trips", fade: 60) } throws: {
            ($0 as? Nu11Error)?.code == .invalidArgument
        }
        var late = try ImportPlan(paths: [top + "/a"], recursive: false, album: "Trips")
        late.fade = 60
        #expect { _ = try vault.items.importGroup(late.groups[0], of: late) } throws: { ($0 as? Nu11Error)?.code == .invalidArgument }
    }
}
