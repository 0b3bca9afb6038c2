// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

@Suite("device state and settings")
struct StateTests {
    @Test("device state round trip; any edit or another device key is detected")
    func deviceState() throws {
        let device = SecretBytes(randomCount: 32)
        var state = DeviceState(now: 1000)
        state.failures = 3
        state.fade = [.init(id: ItemID(), domain: .fade, kind: .file, deadline: 2000)]
        let sealed = try state.sealed(deviceKey: device)
        #expect(try DeviceState.open(sealed, deviceKey: device) == state)
        for i in [0, 4, 10, sealed.count - 1] {
            var bad = sealed
            bad[i] ^= 1
            #expect(throws: Nu11Error.self) { _ = try DeviceState.open(bad, deviceKey: device) }
        }
        #expect(throws: Nu11Error.self) { _ = try DeviceState.open(sealed, deviceKey: SecretBytes(randomCount: 32)) }
        #expect(DeviceState.delay(afterFailures: 4) == 0 && DeviceState.delay(afterFailures: 5) == 60)
        #expect(DeviceState.delay(afterFailures: 6) == 300 && DeviceState.delay(afterFailures: 8) == 900)
        #expect(DeviceState.delay(afterFailures: 9) == 3600 && DeviceState.delay(afterFailures: 50) == 3600)
    }

    @Test("durations")
    func durations() throws {
        #expect(try DurationText.parse("30s") == 30)
        #expect(try DurationText.parse("10m") == 600)
        #expect(try DurationText.parse("24h") == 86400)
        #expect(try DurationText.parse("7d") == 604_800)
        for bad in ["", "s", "10", "-5m", "1.5h", "10y", "3651d", "abc"] {
            #expect(throws: Nu11Error.self, "\(bad)") { _ = try DurationText.parse(bad) }
        }
        #expect(DurationText.format(86400) == "1d" && DurationText.format(90) == "90s")
    }

    @Test("settings: validated set, sealed round trip, migration from version 1 removes obsolete keys")
    func settings() throws {
        var s = Settings()
        try s.set("deletion.mode", "secure")
        try s.set("preview.cache_mib", "128")
        #expect { try s.set("preview.cache_mib", "0") } throws: { ($0 as? Nu11Error)?.remedy?.description.contains("1 … 1024") == true }
        #expect(throws: Nu11Error.self) { try s.set("kdf.memory_mib", "10") }
        #expect(throws: Nu11Error.self) { try s.set("backup.allow", "yes") }
        #expect(throws: Nu11Error.self) { try s.set("nope", "1") }
        // lock.idle (the desktop app): 0 or 10s … 24h.
        #expect(Settings().lockIdle == 300)
        try s.set("lock.idle", "90s")
        #expect(try s.lockIdle == 90 && s.value("lock.idle") == "90s")
        for bad in ["5s", "25h", "-1", "never", "", "1.5m"] {
            #expect { try s.set("lock.idle", bad) } throws: { ($0 as? Nu11Error)?.remedy?.description.contains("10s … 24h") == true }
        }
        #expect(s.lockIdle == 90)
        try s.set("lock.idle", "0")
        #expect(try s.lockIdle == 0 && s.value("lock.idle") == "0")
        try s.set("lock.idle", "2m")
        let device = SecretBytes(randomCount: 32)
        let (back, migrated) = try Settings.open(s.sealed(deviceKey: device), deviceKey: device)
        #expect(back == s && !migrated)

        let legacy = try Settings.sealLegacy(version: 1, values: ["secure_delete": "true", "fade_seconds": "3600",
                                                                  "thumbnail_cache": "50", "preview.cache_mib": "32"],
                                             deviceKey: device)
        let (upgraded, didMigrate) = try Settings.open(legacy, deviceKey: device)
        #expect(didMigrate)
        #expect(upgraded.deletionMode == .secure && upgraded.fadeDefault == 3600 && upgraded.previewCacheMiB == 32)
        let resealed = try upgraded.sealed(deviceKey: device)
        let plain = try SmallSeal.open(Array(resealed[5...]), key: Subkey.derive(from: device, purpose: "settings"),
                                       associatedData: Array("nu11vlt settings v1".utf8))
        let text = String(decoding: plain, as: UTF8.self)
        #expect(!text.contains("secure_delete") && !text.contains("thumbnail_cache") && !text.contains("fade_seconds"))
        #expect(text.contains("\"version\":2"))
        let future = try Settings.sealLegacy(version: 99, values: [:], deviceKey: device)
        #expect { _ = try Settings.open(future, deviceKey: device) } throws: { ($0 as? Nu11Error)?.code == .unsupportedVersion }
    }
}
