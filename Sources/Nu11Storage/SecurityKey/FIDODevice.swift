// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Fido
import Foundation
import Nu11Format

/// A FIDO2 security key, through libfido2 (Sources/CNu11Fido). Every call opens the device,
/// asks and closes it; a touch is awaited for up to 30 s.
///
/// Which device: `$NU11VLT_FIDO2_DEVICE` when set (a hidraw path; in debug builds also
/// `unix:PATH`, the project's software authenticator over an AF_UNIX socket — release builds
/// refuse it), else the first security key libfido2 lists.
public struct FIDODevice: Sendable, Equatable {
    public let path: String

    public init(path: String) { self.path = path }

    public static let environmentName = "NU11VLT_FIDO2_DEVICE"

    /// Whether this build takes `unix:` device paths (debug builds only).
    public static var testTransportBuilt: Bool { n11fido_test_transport_built() != 0 }

    /// The security key to use, or nil when none is plugged in.
    public static func find() throws -> FIDODevice? {
        if let named = ProcessInfo.processInfo.environment[environmentName], !named.isEmpty {
            if named.hasPrefix("unix:") && !testTransportBuilt {
                throw Nu11Error(.invalidArgument, "\(environmentName) names a unix: socket, which only test builds accept",
                                remedy: .advice(.otherSecurityKey))
            }
            if named.hasPrefix("unix:") && !POSIX.exists(String(named.dropFirst(5))) { return nil }
            return FIDODevice(path: named)
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let rc = n11fido_first_device(&buffer, buffer.count)
        if rc == N11FIDO_ERR_NO_DEVICE { return nil }
        try Self.check(rc, doing: "list the security keys")
        return FIDODevice(path: String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Whether the key has its own PIN, and how many tries it has left.
    public func info() throws -> (hasPIN: Bool, retries: Int?) {
        var hasPIN: Int32 = 0
        var retries: Int32 = -1
        try Self.check(n11fido_info(path, &hasPIN, &retries), doing: "read the security key's state")
        return (hasPIN != 0, retries >= 0 ? Int(retries) : nil)
    }

    /// A new credential with hmac-secret (a touch; the key's PIN when it has one).
    public func makeCredential(userID: [UInt8], keyPIN: SecretBytes?) throws -> [UInt8] {
        var credential = [UInt8](repeating: 0, count: SecurityKeyRecord.maxCredentialID)
        var length = credential.count
        let rc = try Self.withCString(keyPIN) { pin in
            userID.withUnsafeBufferPointer { user in
                n11fido_make_credential(path, pin, user.baseAddress, &credential, &length)
            }
        }
        try explain(rc, doing: "create a credential on the security key")
        return Array(credential.prefix(length))
    }

    /// The key's hmac-secret over `salt` for `credentialID` (a touch; with `keyPIN`, the key's
    /// user verification too — a different secret than a touch alone gives).
    public func hmacSecret(credentialID: [UInt8], salt: [UInt8], keyPIN: SecretBytes?) throws -> SecretBytes {
        var rc: Int32 = 0
        let out = try SecretBytes.filling(count: 32) { buffer in
            rc = try Self.withCString(keyPIN) { pin in
                n11fido_hmac_secret(path, pin, credentialID, credentialID.count, salt,
                                    buffer.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
        try explain(rc, doing: "ask the security key for its secret")
        return out
    }

    /// Whether the key holds `credentialID` (asked without a touch).
    public func holds(credentialID: [UInt8]) throws -> Bool {
        let rc = n11fido_has_credential(path, credentialID, credentialID.count)
        if rc == 0x2E { return false }
        try explain(rc, doing: "ask the security key for its credentials")
        return true
    }

    /// The PIN as a NUL-terminated C string in a buffer that is zeroed afterwards.
    static func withCString<R>(_ secret: SecretBytes?, _ body: (UnsafePointer<CChar>?) throws -> R) throws -> R {
        guard let secret else { return try body(nil) }
        var buffer = secret.withUnsafeBytes { Array($0) } + [0]
        defer { secureZero(&buffer) }
        if buffer.dropLast().contains(0) {
            throw Nu11Error(.invalidArgument, "the security key's PIN holds a NUL character", remedy: .advice(.tryAgain))
        }
        return try buffer.withUnsafeBufferPointer { bytes in
            try bytes.withMemoryRebound(to: CChar.self) { try body($0.baseAddress) }
        }
    }

    /// libfido2's codes, as one line each that says what to do.
    func explain(_ rc: Int32, doing what: String) throws {
        switch rc {
        case 0: return
        case 0x2E:  // CTAP2_ERR_NO_CREDENTIALS: this key never made the credential
            throw Nu11Error.wrongSecurityKey
        case 0x31:  // CTAP2_ERR_PIN_INVALID
            let left = (try? info().retries) ?? nil
            throw Nu11Error(.authenticationFailed, "the security key's own PIN is wrong",
                            remedy: .advice(.securityKeyPIN(triesLeft: left ?? 0)))
        case 0x32, 0x34:  // PIN_BLOCKED, PIN_AUTH_BLOCKED
            throw Nu11Error(.authenticationFailed, "the security key has blocked its own PIN", remedy: .advice(.securityKeyPINBlocked))
        case 0x36:  // PIN_REQUIRED
            throw Nu11Error(.authenticationFailed, "the security key needs its own PIN",
                            remedy: .advice(.securityKeyPIN(triesLeft: ((try? info().retries) ?? nil) ?? 0)))
        case 0x27, 0x2F, -8:  // OPERATION_DENIED, USER_ACTION_TIMEOUT, FIDO_ERR_USER_PRESENCE_REQUIRED
            throw Nu11Error(.authenticationFailed, "the security key was not touched", remedy: .advice(.touchSecurityKey))
        default:
            try Self.check(rc, doing: what, path: path)
        }
    }

    static func check(_ rc: Int32, doing what: String, path: String? = nil) throws {
        guard rc != 0 else { return }
        let name = String(cString: n11fido_describe(rc))
        if rc == N11FIDO_ERR_TEST_TRANSPORT {
            throw Nu11Error(.invalidArgument, "could not \(what): \(name)", remedy: .advice(.otherSecurityKey))
        }
        let at = path.map { " at \($0)" } ?? ""
        throw Nu11Error(.notFound, "could not \(what)\(at) (\(name))", remedy: .useEnrolledSecurityKeyOrPIN)
    }
}
