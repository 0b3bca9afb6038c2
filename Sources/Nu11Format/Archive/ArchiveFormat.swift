// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// The `.nu11vlt` archive: a ZIP container (stored entries) of
///
///     nu11vlt-archive.json   clear header: format, version, kind, KDF (portable) or key ID (secure)
///     manifest.c2sp          Cobblestone-256 stream of the JSON manifest
///     items/<hex>.c2sp       one Cobblestone-256 stream per item
///
/// Portable: input key = Argon2id(password, salt, header's cost), 32 bytes. Secure: input
/// key = the key store's Archive key, and each item's plaintext is its `.n11` file, whose
/// item key travels in the manifest wrapped under the Archive key. Contexts:
/// `"nu11vlt-archive/v1/manifest"` and `"nu11vlt-archive/v1/item/" || entry name`.
public enum ArchiveFormat {
    public static let headerName = "nu11vlt-archive.json"
    public static let manifestName = "manifest.c2sp"
    public static let itemPrefix = "items/"
    public static let version = 1
    public static let maxHeaderBytes = 64 << 10
    public static let maxManifestBytes = 64 << 20
    public static let maxEntries = 1_000_000
    public static let maxEntryBytes: UInt64 = 256 << 30
    public static let maxTotalBytes: UInt64 = 2 << 40
    public static let maxCompressionRatio: UInt64 = 100

    public static let manifestContext = Array("nu11vlt-archive/v1/manifest".utf8)
    public static func itemContext(_ entry: String) -> [UInt8] { Array("nu11vlt-archive/v1/item/".utf8) + Array(entry.utf8) }

    public enum Kind: String, Codable, Sendable { case portable, secure }

    public struct KDF: Codable, Sendable, Equatable {
        public var algorithm: String
        public var iterations: UInt32
        public var memoryKiB: UInt32
        public var parallelism: Int
        public var salt: String

        public init(parameters: KDFParameters, salt: [UInt8]) {
            algorithm = "argon2id"
            iterations = parameters.iterations
            memoryKiB = parameters.memoryKiB
            parallelism = 1
            self.salt = Hex.encode(salt)
        }

        public var parameters: KDFParameters { KDFParameters(iterations: iterations, memoryKiB: memoryKiB) }
    }

    public struct Header: Codable, Sendable {
        public var format: String
        public var version: Int
        public var kind: Kind
        public var kdf: KDF?
        /// Secure archives: HKDF of the Archive key, to tell "another key store" from damage.
        public var keyID: String?
        public var items: Int

        public init(kind: Kind, kdf: KDF?, keyID: String?, items: Int) {
            format = "nu11vlt-archive"
            version = ArchiveFormat.version
            self.kind = kind
            self.kdf = kdf
            self.keyID = keyID
            self.items = items
        }

        /// Parses and checks the clear header; KDF cost is capped before anything is allocated.
        public static func parse(_ bytes: [UInt8]) throws -> Header {
            guard let header = try? JSONDecoder().decode(Header.self, from: Data(bytes)), header.format == "nu11vlt-archive" else {
                throw Nu11Error(.corrupted, "the archive header is not valid", remedy: .advice(.damagedOrForeign))
            }
            guard header.version == ArchiveFormat.version else {
                throw Nu11Error(.unsupportedVersion,
                                "archive version \(header.version) is not supported (this version of Nu11VLT reads version \(ArchiveFormat.version))",
                                remedy: .upgrade)
            }
            guard header.items >= 0, header.items <= ArchiveFormat.maxEntries else {
                throw Nu11Error(.corrupted, "the archive header declares \(header.items) items", remedy: .advice(.damaged))
            }
            switch header.kind {
            case .portable:
                guard let kdf = header.kdf, kdf.algorithm == "argon2id", kdf.parallelism == 1,
                      Hex.decode(kdf.salt)?.count == Argon2id.saltByteCount else {
                    throw Nu11Error(.corrupted, "the archive's KDF parameters are not valid", remedy: .advice(.damaged))
                }
                try kdf.parameters.validateRead()
            case .secure:
                guard header.keyID?.count == 32 else {
                    throw Nu11Error(.corrupted, "the archive's key ID is missing", remedy: .advice(.damaged))
                }
            }
            return header
        }
    }

    public struct ManifestItem: Codable, Sendable {
        public var entry: String
        public var kind: String
        public var name: String
        public var size: UInt64
        public var type: String
        public var created: Double
        public var album: String?
        /// Unix seconds when the item fades, for fade items.
        public var fadeDeadline: Double?
        /// Secure archives: the item's ID, domain and key wrapped under the Archive key.
        public var id: String?
        public var domain: UInt8?
        public var wrappedKey: String?
        /// Images: the quarter turns clockwise (1, 2 or 3) the user added (`nu11vlt rotate`);
        /// absent for none. Older archives lack it; older readers ignore it.
        public var rotate: Int?

        public init(entry: String, kind: String, name: String, size: UInt64, type: String, created: Double,
                    album: String?, fadeDeadline: Double?) {
            self.entry = entry
            self.kind = kind
            self.name = name
            self.size = size
            self.type = type
            self.created = created
            self.album = album
            self.fadeDeadline = fadeDeadline
        }
    }

    public struct Manifest: Codable, Sendable {
        public var version: Int
        public var albums: [String]
        public var items: [ManifestItem]

        public init(albums: [String], items: [ManifestItem]) {
            version = ArchiveFormat.version
            self.albums = albums
            self.items = items
        }
    }

    /// Key ID of an Archive key (secure archives).
    public static func keyID(_ archiveKey: SecretBytes) -> String {
        let id = HKDF<SHA256>.expand(pseudoRandomKey: archiveKey, info: Array("nu11vlt archive key id".utf8), outputByteCount: 16)
        return id.withUnsafeBytes { Hex.encode($0) }
    }

    /// Entry names this version writes: exactly the header, the manifest, or items/<32 hex>.c2sp.
    public static func isValidEntryName(_ name: String) -> Bool {
        if name == headerName || name == manifestName { return true }
        guard name.hasPrefix(itemPrefix), name.hasSuffix(".c2sp") else { return false }
        let hex = name.dropFirst(itemPrefix.count).dropLast(5)
        return hex.count == 32 && hex.allSatisfy { "0123456789abcdef".contains($0) }
    }
}
