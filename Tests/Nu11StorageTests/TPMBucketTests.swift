// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Storage

/// Enrolment with PINs whose TPM buckets meet (docs/FORMAT.md §4.2c): with one salt, two
/// PINs share a bucket once in 16 key stores, and enrolling them was refused ("change one
/// of them"). The test makes such a pair on purpose, against a software TPM of its own.
@Suite("TPM enrolment: PINs that would share a TPM entry", .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm")))
struct TPMBucketTests {
    /// A swtpm on a Unix socket in `dir`, killed at the end.
    final class Swtpm {
        let dir: String
        let process = Process()
        init(dir: String) throws {
            self.dir = dir
            try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/swtpm")
            process.arguments = ["socket", "--tpm2", "--tpmstate", "dir=\(dir)/state", "--server", "type=unixio,path=\(dir)/sock",
                                 "--ctrl", "type=unixio,path=\(dir)/sock.ctrl", "--flags", "not-need-init,startup-clear"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 where !FileManager.default.fileExists(atPath: dir + "/sock") { usleep(20_000) }
        }
        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    static func bytes(_ secret: SecretBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    static func bucket(_ record: MasterRecord, _ text: String) throws -> UInt8 {
        TPMRecord.bucket(stretched: try record.stretch(pin: pin(text)))
    }

    @Test("a backup PIN in the primary's bucket: enrolment draws a new salt, both PINs open through the TPM, the old salt opens nothing")
    func collidingPINs() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let tpm = try Swtpm(dir: root + "/tpm")
        try #require(FileManager.default.fileExists(atPath: root + "/tpm/sock"), "swtpm did not start")
        setenv("NU11VLT_TPM_TCTI", "swtpm:path=\(root)/tpm/sock", 1)
        defer { unsetenv("NU11VLT_TPM_TCTI"); _ = tpm }

        let (store, primary) = try KeyStore.create(root: root + "/ks", pin: pin("2468"), parameters: .floor)
        let before = try store.readMaster()
        let wanted = try Self.bucket(before, "2468")
        // One candidate in 16 lands in the primary's bucket; 400 leave about one run in 10^11 without one.
        let backup = try #require(try (0..<400).lazy.map { "backup \($0)" }.first { try Self.bucket(before, $0) == wanted })
        let backupKeys = DomainKeys.generate(role: .backup)
        try store.sealSlot(1, keys: backupKeys, pin: pin(backup))
        #expect(try store.unlock(pin: pin(backup)).slot == 1)

        let enrolment = try store.enrollTPM(pins: [pin("2468"), pin(backup)], pcrMask: 0, state: DeviceState(now: 0), strongPIN: false)
        #expect(enrolment.unlocked.slot == 0)
        let after = try store.readMaster()
        let bound = try #require(after.tpm)
        #expect(after.salt != before.salt, "the salt was not drawn again")
        #expect(after.parameters == before.parameters)
        #expect(Set(bound.buckets).count == 3, "entries share a bucket: \(bound.buckets)")
        #expect(bound.buckets.prefix(2) == [try Self.bucket(after, "2468"), try Self.bucket(after, backup)])

        // Both PINs open their own slot, through the TPM, with the keys they had.
        let opened = try store.unlock(pin: pin("2468"))
        #expect(opened.slot == 0 && opened.tpm != nil && Self.bytes(opened.keys.main) == Self.bytes(primary.keys.main))
        let openedBackup = try store.unlock(pin: pin(backup))
        #expect(openedBackup.slot == 1 && openedBackup.tpm != nil && Self.bytes(openedBackup.keys.main) == Self.bytes(backupKeys.main))
        // The PINs under the old salt, without the TPM (as before enrolment), open nothing.
        let oldKEK = MasterRecord.kek(stretched: try before.stretch(pin: pin("2468")), deviceKey: try store.deviceKey(), tpmSecret: nil)
        #expect(throws: Nu11Error.self) { _ = try after.open(kek: oldKEK) }
        // A PIN of neither is refused.
        #expect(throws: Nu11Error.self) { try store.unlock(pin: pin("1357")) }
    }

    @Test("the same PIN given twice is refused before any salt is drawn or TPM reached, and nothing changes")
    func samePINTwice() throws {
        // Two equal PINs share a bucket under every salt: they must be refused as one slot,
        // not drawn for. No TPM is set up: the refusal comes first.
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (store, _) = try KeyStore.create(root: root + "/ks", pin: pin("2468"), parameters: .floor)
        let before = try store.readMaster().encoded()
        #expect { _ = try store.enrollTPM(pins: [pin("2468"), pin("2468")], pcrMask: 0, state: DeviceState(now: 0), strongPIN: false) } throws: {
            ($0 as? Nu11Error)?.message.contains("opens no other slot") == true
        }
        #expect(try store.readMaster().encoded() == before)
    }
}
