// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// A zxcvbn-style strength estimate: the fewest guesses among the ways an attacker would
/// try (a common-password list, keyboard and number sequences, repeats, dictionary-word
/// passphrases, brute force over the characters used), in bits. Conservative by design:
/// it is there to warn, and to refuse archive passwords a laptop could guess.
public enum Strength {
    static let common: Set<String> = [
        "password", "passwort", "motdepasse", "qwerty", "azerty", "qwertz", "letmein", "iloveyou", "admin", "welcome",
        "monkey", "dragon", "football", "baseball", "sunshine", "princess", "master", "shadow", "superman", "batman",
        "trustno", "secret", "login", "hello", "freedom", "whatever", "starwars", "pokemon", "charlie", "michael",
        "jennifer", "jordan", "hunter", "ranger", "killer", "soccer", "hockey", "summer", "winter", "flower",
        "cookie", "purple", "orange", "banana", "chocolate", "computer", "internet", "nu11vlt", "vault", "photos",
        "abc", "asdf", "zxcv", "qazwsx", "changeme", "default", "test", "guest", "root", "pass",
    ]
    static let rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm", "azertyuiop", "qwertzuiop", "1234567890", "abcdefghijklmnopqrstuvwxyz"]

    /// Estimated guesses, as bits (log2).
    public static func bits(_ secret: SecretBytes) -> Double {
        secret.withUnsafeBytes { bits(String(decoding: $0, as: UTF8.self)) }
    }

    public static func bits(_ text: String) -> Double {
        let chars = Array(text)
        guard !chars.isEmpty else { return 0 }
        let lower = text.lowercased()
        // Brute force over the character classes used.
        var pool = 0
        if chars.contains(where: { $0.isLowercase }) { pool += 26 }
        if chars.contains(where: { $0.isUppercase }) { pool += 26 }
        if chars.contains(where: { $0.isNumber }) { pool += 10 }
        if chars.contains(where: { !$0.isLetter && !$0.isNumber && $0.isASCII }) { pool += 33 }
        if chars.contains(where: { !$0.isASCII }) { pool += 100 }
        var best = Double(chars.count) * log2(Double(max(pool, 2)))
        // One character repeated, or a run along a keyboard row / the alphabet / the digits.
        if Set(chars).count == 1 { best = min(best, log2(Double(pool * chars.count) + 1)) }
        for row in rows where row.contains(lower) || String(row.reversed()).contains(lower) {
            best = min(best, log2(Double(row.count * 2 * chars.count)))
        }
        // A common password, with a few digits or symbols around it.
        let core = lower.trimmingCharacters(in: CharacterSet.letters.inverted)
        if common.contains(core) || rows.contains(where: { $0.hasPrefix(core) && core.count >= 3 }) {
            let extra = chars.count - core.count
            best = min(best, log2(Double(common.count)) + Double(extra) * log2(43) + 1)
        }
        // Words from a dictionary (a passphrase): about 13.3 bits per word of 3+ letters.
        let words = lower.split(whereSeparator: { !$0.isLetter }).filter { $0.count >= 3 }
        let others = lower.filter { !$0.isLetter }.count
        if !words.isEmpty && words.joined().count * 10 >= lower.filter(\.isLetter).count * 9 {
            let wordBits = words.map { common.contains(String($0)) ? 6.0 : 13.3 }.reduce(0, +)
            best = min(best, wordBits + Double(others) * 1.5)
        }
        return max(0, best)
    }

    /// How long an offline guesser needs, on one core, for half the candidates, at the
    /// Argon2id cost given (about 0.65 ms per MiB and pass on a 2020s laptop core).
    public static func offlineTime(bits: Double, parameters: KDFParameters) -> String {
        let perGuess = Double(parameters.memoryMiB) * Double(parameters.iterations) * 0.00065
        let seconds = pow(2, bits - 1) * perGuess
        func about(_ count: Double, _ unit: String) -> String {
            let n = Int(count)
            return n == 1 ? "about one \(unit)" : "about \(n) \(unit)s"
        }
        switch seconds {
        case ..<60: return "under a minute"
        case ..<3600: return about(seconds / 60, "minute")
        case ..<86400: return about(seconds / 3600, "hour")
        case ..<(86400 * 365): return about(seconds / 86400, "day")
        case ..<(86400 * 365 * 1000): return about(seconds / (86400 * 365), "year")
        default: return "more than a thousand years"
        }
    }

    /// The warning for a weak PIN or passphrase, or nil. Digits only: fewer than 6 warns.
    public static func pinWarning(_ pin: SecretBytes, parameters: KDFParameters) -> String? {
        let estimate = bits(pin)
        let digitsOnly = pin.withUnsafeBytes { $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        guard (digitsOnly && pin.count < 6) || estimate < 40 else { return nil }
        return "warning: this PIN is weak (about \(Int(estimate)) bits): whoever copies the vault and its key store can try every candidate offline in \(offlineTime(bits: estimate, parameters: parameters)) on one core; a passphrase of 5 or more random words takes centuries"
    }

    /// The PINs and passwords a thief tries first (the most common 4- and 6-digit PINs in
    /// published studies of leaked PINs, and the top passwords), and every PIN of one digit
    /// repeated or of digits counting up or down. Refused as a new PIN: the TPM's limit or the
    /// delay after wrong PINs gives a guesser only a few tries, and these are those tries.
    static let triedFirst: Set<String> = [
        "1212", "1004", "2000", "6969", "1122", "1313", "2001", "1010", "2580", "0852", "1984", "1990",
        "121212", "123123", "112233", "159753", "123321", "696969", "147258", "789456", "102030", "131313",
        "password", "passwort", "qwerty", "qwertz", "azerty", "letmein", "iloveyou", "abc123",
    ]

    /// Refuses a new PIN a thief tries first (the front ends ask this of every new PIN; the
    /// library's own floor is the length, `LockedVault.validateNewPIN`).
    public static func refuseCommonPIN(_ pin: SecretBytes) throws {
        guard isCommonPIN(pin) else { return }
        throw Nu11Error(.invalidArgument, "that PIN is one of the first a thief tries (a common PIN, one digit repeated or digits in a row); nothing was changed",
                        remedy: .advice(.uncommonPIN))
    }

    /// Whether a new PIN is one a thief tries first (`triedFirst`).
    public static func isCommonPIN(_ pin: SecretBytes) -> Bool {
        pin.withUnsafeBytes { isCommonPIN(String(decoding: $0, as: UTF8.self)) }
    }

    /// The same, for text typed into a field (the app judges as it is typed).
    public static func isCommonPIN(_ typed: String) -> Bool {
        let text = typed.lowercased()
        if triedFirst.contains(text) { return true }
        let digits = Array(text.utf8)
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.count <= 10 else { return false }
        let steps = Set(zip(digits.dropFirst(), digits).map { (Int($0) - Int($1) + 10) % 10 })
        return steps.count == 1 && [0, 1, 9].contains(steps.first ?? 0)  // 1111, 1234 (7890), 4321
    }

    /// Archive passwords leave the machine: below this they are refused.
    public static let archiveFloor = 45.0

    /// Strong enough to stand an offline guesser (the archive floor): required of the primary
    /// PIN when the TPM's wrong-PIN limit is someone else's to reset.
    public static func passphraseStrong(_ pin: SecretBytes) -> Bool { bits(pin) >= archiveFloor }

    /// A diceware-style passphrase: 8 random pronounceable words of 5 letters (CVCVC, about
    /// 16.6 bits each: 133 bits), hyphenated.
    public static func generatePassphrase() -> SecretBytes {
        let consonants = Array("bdfghjklmnprstvz".utf8)
        let vowels = Array("aeiou".utf8)
        var out: [UInt8] = []
        for word in 0..<8 {
            if word > 0 { out.append(UInt8(ascii: "-")) }
            for position in 0..<5 {
                let set = position % 2 == 0 ? consonants : vowels
                out.append(set[Int(uniform(UInt32(set.count)))])
            }
        }
        return SecretBytes(consuming: &out)
    }

    /// A uniform random number below `bound` (rejection sampling over the CSPRNG).
    static func uniform(_ bound: UInt32) -> UInt32 {
        let limit = UInt32.max - UInt32.max % bound
        while true {
            let bytes = SecureRandom.bytes(4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if value < limit { return value % bound }
        }
    }
}
