// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

/// The kitty graphics protocol: PNG only (f=100), sent in base64 chunks of 4096 bytes.
enum KittyGraphics {
    static func escape(png: [UInt8], id: Int? = nil, columns: Int? = nil, rows: Int? = nil, keepCursor: Bool = false) -> String {
        let encoded = Data(png).base64EncodedString()
        var keys = "a=T,f=100,q=2"
        if let id { keys += ",i=\(id)" }
        if let columns { keys += ",c=\(columns)" }
        if let rows { keys += ",r=\(rows)" }
        if keepCursor { keys += ",C=1" }
        var out = ""
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 4096, limitedBy: encoded.endIndex) ?? encoded.endIndex
            let more = end < encoded.endIndex ? 1 : 0
            out += start == encoded.startIndex ? "\u{1B}_G\(keys),m=\(more);\(encoded[start..<end])\u{1B}\\"
                : "\u{1B}_Gm=\(more);\(encoded[start..<end])\u{1B}\\"
            start = end
        }
        return out
    }

    static var terminalSpeaksIt: Bool {
        let env = ProcessInfo.processInfo.environment
        return env["TERM"] == "xterm-kitty" || env["KITTY_WINDOW_ID"] != nil
    }

    /// A grid of tiles: `perRow` tiles of 16×8 cells, each with its short ID under it.
    static func grid(_ items: [ItemSummary], vault: Vault, columns: Int) -> String {
        let perRow = max(1, columns / 17)
        var out = ""
        for row in stride(from: 0, to: items.count, by: perRow) {
            let slice = items[row..<min(items.count, row + perRow)]
            for item in slice {
                if item.thumbnail,
                   let tile = try? vault.photos.thumbnail(ItemRef(item.id), size: .grid),
                   let png = try? ImageHelper.shared.png(tile.bytes, maxSide: ImageLimits.gridSize) {
                    out += escape(png: png, columns: 16, rows: 8, keepCursor: true) + "\u{1B}[17C"
                } else {
                    out += "[\(item.isImage ? "image" : "file")]".padding(toLength: 17, withPad: " ", startingAt: 0)
                }
            }
            out += String(repeating: "\n", count: 8)
            out += slice.map { String($0.id.hex.prefix(8)).padding(toLength: 17, withPad: " ", startingAt: 0) }.joined()
                .trimmingTrailingSpaces + "\n"
        }
        return out
    }
}
