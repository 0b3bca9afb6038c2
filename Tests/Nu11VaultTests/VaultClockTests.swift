// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage
import Testing
@testable import Nu11Vault

/// A clock the test moves by hand: wall time and the boot clock separately.
final class TestClock: VaultClock, @unchecked Sendable {
    private let lock = NSLock()
    private var wall: Double
    private var bootID: String
    private var elapsed: Double

    init(wall: Double = Date().timeIntervalSince1970, bootID: String = UUID().uuidString, elapsed: Double = 1000) {
        self.wall = wall
        self.bootID = bootID
        self.elapsed = elapsed
    }

    func wallTime() -> Double { lock.withLock { wall } }
    func bootTime() -> DeviceState.BootAnchor? { lock.withLock { DeviceState.BootAnchor(id: bootID, elapsed: elapsed, time: 0) } }

    /// Real time passes: both clocks move.
    func pass(_ seconds: Double) { lock.withLock { wall += seconds; elapsed += seconds } }
    /// Someone sets the wall clock; the boot clock does not move.
    func setWall(by seconds: Double) { lock.withLock { wall += seconds } }
    func reboot(offFor seconds: Double) { lock.withLock { wall += seconds; elapsed = 5; bootID = UUID().uuidString } }
}

@Suite("the vault's clock: boot time within a boot, never backwards across boots")
struct VaultClockTests {
    func open(_ t: TestVault, _ clock: TestClock, pin: String = "test-pin") throws -> Vault {
        try LockedVault(t.location, clock: clock).unlock(pin: secret(pin))
    }

    @Test("wrong PINs during a forward excursion wait one minute of real time, not the excursion")
    func lockoutAfterExcursion() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        _ = try open(t, clock)
        clock.setWall(by: 2 * 86400)
        for _ in 0..<5 { #expect(throws: Nu11Error.self) { _ = try open(t, clock, pin: "wrong") } }
        clock.setWall(by: -2 * 86400)  // the right time again
        #expect { _ = try open(t, clock) } throws: { ($0 as? Nu11Error)?.code == .lockedOut }
        clock.pass(59)
        #expect { _ = try open(t, clock) } throws: { ($0 as? Nu11Error)?.code == .lockedOut }
        clock.pass(2)
        #expect(throws: Never.self) { _ = try open(t, clock) }
    }

    /// One command: open, work, close (the lock is held per command).
    func command<T>(_ t: TestVault, _ clock: TestClock, _ body: (Vault) throws -> T) throws -> T {
        let vault = try open(t, clock)
        return try body(vault)
    }

    @Test("a fade item expires after its real duration, whatever the wall clock says")
    func fadeByBootTime() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        let path = try t.file("f.jpg", [1, 2])
        let item = try command(t, clock) { try $0.items.importFile(at: path, fade: 3600) }
        clock.setWall(by: 7200)  // the wall clock jumps: nothing fades
        #expect(try command(t, clock) { try $0.items.list().items.map(\.id) }.contains(item.id))
        clock.setWall(by: -7200)
        clock.pass(3601)  // an hour of real time: it fades
        #expect(!(try command(t, clock) { try $0.items.list().items.map(\.id) }.contains(item.id)))
    }

    @Test("across a reboot, a clock behind the latest time seen is held there: nothing fires, time then runs")
    func rebootWithClockBehind() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        let path = try t.file("f.jpg", [3])
        let item = try command(t, clock) { vault in
            try vault.profiles.enableSkeleton(interval: 86400, secure: false)
            return try vault.items.importFile(at: path, fade: 600)
        }
        clock.reboot(offFor: -3 * 86400)  // the RTC came back three days early
        let report = try LockedVault(t.location, clock: clock).sweep()
        #expect(report.warnings.contains { $0.contains("behind") })
        #expect(report.shredded.isEmpty)
        #expect(try command(t, clock) { try $0.items.list().items.map(\.id) }.contains(item.id))
        clock.pass(601)
        #expect(!(try command(t, clock) { try $0.items.list().items.map(\.id) }.contains(item.id)))
    }

    @Test("in a vault that stays open, an item whose fade deadline passes leaves listings and never decrypts again")
    func readTimeFadeCheckInLongSession() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        let vault = try open(t, clock)
        let item = try vault.items.importFile(at: try t.file("f.jpg", [1, 2, 3]), fade: 60)
        var sink = MemorySink()
        #expect(try vault.items.export(item.ref, to: &sink) == 3)
        clock.pass(61)  // no reopening: the start-up sweep cannot be what stops it
        #expect(!(try vault.items.list().items.map(\.id).contains(item.id)))
        var late = MemorySink()
        #expect { try vault.items.export(item.ref, to: &late) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect(late.bytes.isEmpty)
        #expect(throws: Nu11Error.self) { _ = try vault.items.read(item.ref, offset: 0, count: 3) }
        // The read-time check itself, below the listing filter: opening the row refuses.
        let row = try #require(try vault.index.item(item.id))
        #expect { _ = try vault.items.openItem(row) } throws: { ($0 as? Nu11Error)?.message.contains("faded") == true }
    }
}

@Suite("sealed index metadata is bound to its row")
struct MetadataBindingTests {
    @Test("swapping two rows' sealed metadata is detected for both rows")
    func swapDetected() throws {
        let t = try TestVault()
        let vault = try t.vault
        let a = try vault.items.importFile(at: try t.file("a.jpg", [1]))
        let b = try vault.items.importFile(at: try t.file("b.jpg", [2]))
        var rowA = try #require(try vault.index.item(a.id))
        var rowB = try #require(try vault.index.item(b.id))
        #expect(vault.maintenance.verify(rowA) == nil && vault.maintenance.verify(rowB) == nil)
        (rowA.meta, rowB.meta) = (rowB.meta, rowA.meta)
        try vault.index.updateItem(rowA)
        try vault.index.updateItem(rowB)
        #expect(vault.maintenance.verify(rowA) != nil && vault.maintenance.verify(rowB) != nil, "a swapped metadata blob still opened")
        #expect(throws: Nu11Error.self) { _ = try vault.items.item(a.ref) }
        let report = try vault.maintenance.check(repair: false)
        #expect(Set(report.failures.map(\.item)) == [a.id.hex, b.id.hex])
    }
}

extension ItemSummary {
    /// The item's whole ID as the API takes it.
    var ref: ItemRef { ItemRef(id) }
}
