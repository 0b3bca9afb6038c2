// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension Nu11Error {
    /// Any error in a few words, for a one-line message: a `Nu11Error`'s message; for a
    /// Foundation (or ZIPFoundation) error the system's reason when it has one (an NSError's
    /// underlying POSIX error), never a dump of its user info.
    public static func words(_ error: any Error) -> String {
        if let error = error as? Nu11Error { return error.message }
        var current: NSError? = error as NSError
        while let e = current {
            if e.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(e.code))) }
            current = e.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        let ns = error as NSError
        // A Swift error that is not an NSError bridges into a domain named after its type.
        if ns.domain == NSCocoaErrorDomain { return ns.localizedDescription }
        return "\(error)"
    }
}
