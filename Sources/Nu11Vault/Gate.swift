import Foundation
import Nu11Format
import Nu11Storage

/// What runs at the start of every command, before any PIN prompt, with only the
/// device-bound key: the clock check, the fade sweep and the failed-PIN policy.
///
/// Policies (documented in docs/THREAT-MODEL.md):
/// * Time never runs backwards: the effective time is the later of the clock and the latest
///   time any command saw, so setting the clock back postpones no PIN delay. A clock more
///   than 5 minutes behind the latest time seen is treated as tampering: every fade item is
///   destroyed at once (fade fails closed), and a warning says so.
/// * A missing or altered device state (while the key store exists) is tampering: every fade
///   item is shredded and PIN entry waits one hour, as after nine wrong PINs. Deleting or
///   editing the file can only make things stricter.
/// * A fade item without a schedule entry is treated as expired.
/// * The Skeleton Switch fires when its interval passed without a primary check-in, when the
///   clock was set back while it is armed, or when it is armed (flag bound into the master
///   record's slot 0) and its state is missing or altered.
public struct GateReport: Sendable {
    public var now: Double
    public var shredded: [String] = []
    public var warnings: [String] = []
}

enum Gate {
    static func clock() -> Double { Date().timeIntervalSince1970 }

    /// How far the clock may step back (NTP corrections) before it counts as tampering.
    static let rollbackTolerance: Double = 300

    /// Runs the checks; the caller holds the vault lock.
    static func run(_ location: VaultLocation, keyStore: KeyStore, index: VaultIndex) throws -> (DeviceState, GateReport) {
        let wall = clock()
        var report = GateReport(now: wall)
        var state: DeviceState
        var fadeTampered = false
        switch try keyStore.loadState() {
        case .loaded(let loaded):
            state = loaded
        case .missing, .damaged:
            state = DeviceState(now: wall)
            state.failures = 9
            state.lockedUntil = wall + DeviceState.delay(afterFailures: 9)
            fadeTampered = true
            report.warnings.append("the device state was missing or altered: fade items were destroyed and PIN entry waits 1 hour")
        }
        let rolledBack = wall + rollbackTolerance < state.latestSeen
        try skeletonCheck(location, keyStore: keyStore, state: fadeTampered ? nil : state,
                          now: max(wall, state.latestSeen), rolledBack: rolledBack)
        if rolledBack {
            fadeTampered = true
            report.warnings.append("the system clock is \(Int(state.latestSeen - wall)) s behind the latest time nu11vlt saw: fade items were destroyed and PIN delays use the latest time seen")
        }
        let now = max(wall, state.latestSeen)
        state.latestSeen = now
        report.now = now

        try recoverPending(location, keyStore: keyStore, index: index)

        // The fade sweep: expired entries, and fade items the schedule does not know.
        let scheduled = Dictionary(state.fade.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var expired = Set(state.fade.filter { $0.deadline <= now }.map(\.id))
        for id in try index.itemIDs(domain: .fade) where fadeTampered || scheduled[id] == nil {
            expired.insert(id)
        }
        if fadeTampered { expired.formUnion(state.fade.map(\.id)) }
        if !expired.isEmpty {
            // Keys first (that is the destruction), then files, then rows.
            for id in expired {
                try keyStore.destroyItemKey(id)
                let known = scheduled[id].flatMap { ItemKind(rawValue: $0.kind) }
                for kind in known.map({ [$0] }) ?? ItemKind.allCases {
                    let probe = ItemRow(id: id, kind: kind, domain: .fade, album: nil, meta: [])
                    for path in Vault.candidatePaths(location, probe) { try ProtectedFiles.remove(path) }
                }
            }
            try index.deleteItems(Array(expired))
            state.fade.removeAll { expired.contains($0.id) }
            report.shredded = expired.map(\.hex).sorted()
        }
        try keyStore.saveState(state)
        return (state, report)
    }

    /// The Skeleton Switch fires when the interval passed without a primary check-in — or,
    /// when the switch is armed (flag in the master record) and the state that holds the
    /// last check-in is missing or altered. It wipes before anything else and says so.
    static func skeletonCheck(_ location: VaultLocation, keyStore: KeyStore, state: DeviceState?, now: Double,
                              rolledBack: Bool) throws {
        let armed = (try? keyStore.readMaster().skeletonArmed) ?? false
        let reason: String
        let secure: Bool
        if let skeleton = state?.skeleton {
            if rolledBack {
                // A clock set back must not postpone the switch: it counts as tampering.
                reason = "the system clock was set back"
            } else {
                guard now > skeleton.deadline else { return }
                reason = "no check-in for \(DurationText.format(skeleton.interval))"
            }
            secure = skeleton.secure
        } else if state == nil && armed {
            reason = "its state was deleted or altered"
            secure = false
        } else {
            return
        }
        try Wipe.run(location, secure: secure)
        throw Nu11Error(.notFound, "the Skeleton Switch fired (\(reason)): the vault was wiped",
                        remedy: "nothing can be recovered; create a new vault with `nu11vlt init`")
    }

    /// Finishes what a crash interrupted: an import without its index row is undone (the
    /// item is absent), a delete is completed.
    static func recoverPending(_ location: VaultLocation, keyStore: KeyStore, index: VaultIndex) throws {
        var markers = Set<String>()
        for (op, marker) in try keyStore.pendingOperations() {
            markers.insert(marker)
            guard let kind = ItemKind(rawValue: op.kind), let domain = Domain(rawValue: op.domain) else { continue }
            let row = try index.item(op.id)
            if op.operation == .importing && row != nil { continue }
            try keyStore.destroyItemKey(op.id)
            let probe = ItemRow(id: op.id, kind: kind, domain: domain, album: op.album, meta: [])
            for path in Vault.candidatePaths(location, probe) { try ProtectedFiles.remove(path) }
            if row != nil { try index.deleteItems([op.id]) }
        }
        for marker in markers { try ProtectedFiles.remove(marker) }
    }

    /// Refuses PIN entry while the failed-PIN delay runs.
    static func checkLockout(_ state: DeviceState, now: Double) throws {
        guard now < state.lockedUntil else { return }
        let wait = Int((state.lockedUntil - now).rounded(.up))
        let text = wait >= 120 ? "\((wait + 59) / 60) minutes" : "\(wait) seconds"
        throw Nu11Error(.lockedOut, "too many wrong PINs (\(state.failures)); try again in \(text)",
                        remedy: "wait; the delay grows with every wrong PIN")
    }
}
