import Foundation
import Nu11Format

/// What the index keeps about an item, sealed under the domain's metadata subkey.
struct ItemMetadata: Codable, Sendable {
    var name: String
    var size: UInt64
    var type: String
    var created: Date

    static func aad(_ id: ItemID) -> [UInt8] { Array("nu11vlt item meta v1".utf8) + id.bytes }

    func seal(id: ItemID, key: SecretBytes) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        var plain = [UInt8](try encoder.encode(self))
        defer { secureZero(&plain) }
        return try SmallSeal.seal(plain, key: key, associatedData: Self.aad(id))
    }

    static func open(_ sealed: [UInt8], id: ItemID, key: SecretBytes) throws -> ItemMetadata {
        do {
            var plain = try SmallSeal.open(sealed, key: key, associatedData: aad(id))
            defer { secureZero(&plain) }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            return try decoder.decode(ItemMetadata.self, from: Data(plain))
        } catch {
            throw Nu11Error(.corrupted, "item \(id): its index entry is damaged", remedy: "run `nu11vlt check`", item: id.hex)
        }
    }

    /// A MIME type guessed from the name's extension (metadata only; never trusted).
    static func guessType(_ name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "heic": "image/heic"
        case "bmp": "image/bmp"
        case "ppm", "pnm": "image/x-portable-pixmap"
        case "tif", "tiff": "image/tiff"
        case "mp4": "video/mp4"
        case "mov": "video/quicktime"
        case "txt", "md": "text/plain"
        case "pdf": "application/pdf"
        default: "application/octet-stream"
        }
    }
}

/// An item as a user sees it.
public struct ItemSummary: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    public var size: UInt64
    public var type: String
    public var album: String?
    public var albumID: String?
    public var domain: String
    public var kind: String
    public var created: Date
    /// When the item fades (is destroyed), for fade items.
    public var fadesAt: Date?
}

/// An album as a user sees it.
public struct AlbumSummary: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    public var items: Int
}

/// One page of a listing; `next` continues it.
public struct ItemPage: Sendable {
    public var items: [ItemSummary]
    /// Pass as `after` to get the next page; nil on the last page.
    public var next: String?
}
