// SPDX-License-Identifier: GPL-3.0-or-later

/// The failure classes of the age format (c2sp.org/age), as the CCTV test vectors name them.
/// Each error's message starts with the class's prefix, so a front end and the tests can tell
/// them apart from a plain `Nu11Error` (`AgeFailure.of(_:)`).
public enum AgeFailure: String, Sendable, CaseIterable {
    /// The ASCII armor is not strict PEM (RFC 7468 §3) with the label "AGE ENCRYPTED FILE".
    case armor = "age armor:"
    /// The header does not parse, or a stanza addressed to an identity here is malformed.
    case header = "age header:"
    /// A file key was unwrapped but the header MAC does not match it.
    case headerMAC = "age header MAC:"
    /// No identity given opens any stanza.
    case noMatch = "age file:"
    /// The payload does not decrypt all the way to its end.
    case payload = "age payload:"
    /// A recipient or identity string does not parse.
    case key = "age key:"

    /// The class of an error that the age code threw; nil for any other error.
    public static func of(_ error: (any Error)?) -> AgeFailure? {
        guard let error = error as? Nu11Error else { return nil }
        let message = error.item.map { item in
            error.message.hasPrefix(item + ": ") ? String(error.message.dropFirst(item.count + 2)) : error.message
        } ?? error.message
        // The longest prefix first: "age header MAC:" before "age header:".
        return allCases.sorted { $0.rawValue.count > $1.rawValue.count }.first { message.hasPrefix($0.rawValue) }
    }
}

enum AgeError {
    static func armor(_ what: String) -> Nu11Error {
        Nu11Error(.corrupted, "\(AgeFailure.armor.rawValue) \(what)", remedy: .advice(.ageDamaged))
    }

    static func header(_ what: String) -> Nu11Error {
        Nu11Error(.corrupted, "\(AgeFailure.header.rawValue) \(what)", remedy: .advice(.ageDamaged))
    }

    static func unsupported(_ what: String) -> Nu11Error {
        Nu11Error(.unsupportedVersion, "\(AgeFailure.header.rawValue) \(what)", remedy: .advice(.ageDamaged))
    }

    static func costTooHigh(_ workFactor: Int, limit: Int) -> Nu11Error {
        Nu11Error(.costTooHigh, "\(AgeFailure.header.rawValue) scrypt work factor \(workFactor) is above the limit of \(limit)",
                  remedy: .advice(.untrusted))
    }

    static let headerMAC = Nu11Error(.corrupted, "\(AgeFailure.headerMAC.rawValue) the header was altered",
                                     remedy: .advice(.ageDamaged))

    static let noMatch = Nu11Error(.authenticationFailed,
                                   "\(AgeFailure.noMatch.rawValue) no identity or passphrase given opens this file",
                                   remedy: .advice(.ageOtherRecipient))

    static func payload(_ what: String) -> Nu11Error {
        Nu11Error(.corrupted, "\(AgeFailure.payload.rawValue) \(what)", remedy: .advice(.ageDamaged))
    }

    static func truncated(_ what: String) -> Nu11Error {
        Nu11Error(.truncated, "\(AgeFailure.payload.rawValue) \(what)", remedy: .advice(.ageDamaged))
    }

    static func key(_ what: String) -> Nu11Error {
        Nu11Error(.invalidArgument, "\(AgeFailure.key.rawValue) \(what)", remedy: .advice(.ageRecipientFormat))
    }
}
