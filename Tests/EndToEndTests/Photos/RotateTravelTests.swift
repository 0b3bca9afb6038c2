// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 58: a turn the user gave a photo goes wherever the photo goes — every way out of the
/// vault, not only `export`: a share (location removed or kept), a portable archive imported
/// into another vault, a secure archive brought back after the item was deleted. Read back
/// with exiftool (not the project's EXIF code) and ImageMagick.
@Suite("rotate: the turn travels")
struct RotateTravelTests {
    let rotate = RotateTests()

    /// A 200 × 100 JPEG, left half red, right half blue, with no metadata; imported, turned right.
    func turnedPhoto(_ cli: CLI) throws -> (id: String, photo: String) {
        let photo = cli.root + "/turned.jpg"
        try PhotoFixtures.run(cli, "convert", ["-size", "100x100", "xc:red", "-size", "100x100", "xc:blue", "+append", "-strip",
                                               "-quality", "92", photo])
        let id = try cli.importIDs([photo])[0]
        try rotate.rotate(cli, id)
        return (id, photo)
    }

    /// The only file a share unpacks to, decrypted with age and untarred by tar.
    func unpackShare(_ cli: CLI, _ share: String, identity: String) throws -> String {
        let folder = cli.root + "/unpacked-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let tar = folder + ".tar"
        try PhotoFixtures.run(cli, "age", ["-d", "-i", identity, "-o", tar, share])
        try PhotoFixtures.run(cli, "tar", ["-xf", tar, "-C", folder])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        try #require(files.count == 1, "the share holds \(files)")
        return folder + "/" + files[0]
    }

    @Test("a share carries the turn in the JPEG's EXIF orientation, location removed or kept; the image data is not re-encoded")
    func share() throws {
        let cli = try CLI()
        try cli.initVault()
        let (id, photo) = try turnedPhoto(cli)
        let key = cli.root + "/age.key"
        #expect(try PhotoFixtures.run(cli, "age-keygen", ["-o", key]).code == 0)
        let recipient = try PhotoFixtures.run(cli, "age-keygen", ["-y", key]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        for extra in [[], ["--keep-location"]] {
            let out = cli.root + "/share\(extra.count).age"
            let made = try cli.run(["share", "--to", recipient, "-o", out, id] + extra, pinStdin: true)
            #expect(made.code == 0, "share \(extra): \(made.stderr)")
            let file = try unpackShare(cli, out, identity: key)
            #expect(try rotate.orientation(cli, file) == 6, "share \(extra): the recipient's photo lost its turn")
            #expect(try rotate.sameImageData(file, photo), "share \(extra): the image was re-encoded")
        }
    }

    @Test("a portable archive keeps the turn: imported into another vault the photo lists turned, its tile is turned, its export carries it")
    func portableArchive() throws {
        let a = try CLI(), b = try CLI(pin: "another vault's pin")
        try a.initVault()
        try b.initVault()
        let (_, photo) = try turnedPhoto(a)
        let file = a.root + "/turned.nu11vlt"
        let made = try a.exportArchive(file, extra: ["--portable"])
        #expect(made.code == 0, "archive export: \(made.stderr)")
        let imported = try b.importArchive(file)
        #expect(imported.code == 0, "archive import: \(imported.stderr)")
        let there = try #require(try b.listJSON(["--all"]).first, "nothing imported")
        let newID = try #require(there["id"] as? String)
        #expect(there["rotation"] as? Int == 90 && there["width"] as? Int == 100 && there["height"] as? Int == 200, "\(there)")
        let out = try rotate.export(b, newID, "from-archive.jpg")
        #expect(try rotate.orientation(b, out) == 6)
        #expect(try rotate.sameImageData(out, photo))
        let grid = b.root + "/grid.jpg"
        #expect(try b.run(["thumbnail", newID, "-o", grid], pinStdin: true).code == 0)
        #expect(try PhotoFixtures.size(b, grid) == (100, 200), "the imported photo's tile is not turned")
    }

    @Test("a secure archive brought back after a delete restores the turn")
    func secureArchive() throws {
        let cli = try CLI()
        try cli.initVault()
        let (id, _) = try turnedPhoto(cli)
        let file = cli.root + "/secure.nu11vlt"
        #expect(try cli.exportArchive(file, extra: ["--secure"]).code == 0)
        #expect(try cli.run(["delete", id], pinStdin: true).code == 0)
        let back = try cli.importArchive(file)
        #expect(back.code == 0, "archive import: \(back.stderr)")
        #expect(try rotate.item(cli, id)["rotation"] as? Int == 90)
        #expect(try rotate.orientation(cli, try rotate.export(cli, id, "back.jpg")) == 6)
    }

    @Test("an archive whose manifest claims a rotation of 5 quarter turns is refused, nothing imported")
    func badRotation() throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try turnedPhoto(cli)
        let file = cli.root + "/turned.nu11vlt"
        #expect(try cli.exportArchive(file, extra: ["--portable"]).code == 0)
        // Re-seal the manifest with "rotate": 5, with the archive's own password (as its maker
        // could), written from FORMAT.md §1 and §6 with Python's cryptography, not our code.
        let forged = cli.root + "/forged.nu11vlt"
        let script = """
        import json, os, sys, zipfile
        sys.path.insert(0, sys.argv[1])
        from nu11vlt_decrypt_crypto import argon2id, chunked_open, CHUNK
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        password = sys.stdin.readline().rstrip("\\n").encode()
        src, dst = zipfile.ZipFile(sys.argv[2]), zipfile.ZipFile(sys.argv[3], "w", zipfile.ZIP_STORED)
        kdf = json.loads(src.read("nu11vlt-archive.json"))["kdf"]
        key = argon2id(password, bytes.fromhex(kdf["salt"]), kdf["iterations"], kdf["memoryKiB"])
        context = b"nu11vlt-archive/v1/manifest"
        plain = bytearray()
        with src.open("manifest.c2sp") as f:
            chunked_open(key, context, f, src.getinfo("manifest.c2sp").file_size, plain.extend)
        manifest = json.loads(bytes(plain))
        for item in manifest["items"]:
            item["rotate"] = 5
        body = json.dumps(manifest, sort_keys=True).encode()
        nonce = os.urandom(24)
        okm = HKDFExpand(algorithm=hashes.SHA512(), length=76,
                         info=b"c2sp.org/chunked-encryption@v1+AEAD_AES_256_GCM\\x00" + nonce + context).derive(key)
        aead, base, out = AESGCM(okm[:32]), int.from_bytes(okm[32:44], "big"), bytearray(nonce + okm[44:])
        pieces = [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)]
        if len(body) % CHUNK == 0:
            pieces.append(b"")
        for i, piece in enumerate(pieces):
            out += aead.encrypt((base ^ i).to_bytes(12, "big"), piece, None)
        for info in src.infolist():
            dst.writestr(info.filename, bytes(out) if info.filename == "manifest.c2sp" else src.read(info.filename))
        dst.close()
        """
        let r = try cli.python(script, [Repo.root.appendingPathComponent("tools").path, file, forged],
                               input: Data("violet quartz tulip orbit canyon\n".utf8))
        try #require(r.code == 0, "forging the manifest: \(r.stderr)")
        let other = try CLI(pin: "the importing vault")
        try other.initVault()
        let refused = try other.importArchive(forged)
        #expect(refused.code != 0 && refused.stderr.contains("rotation of 5"), "\(refused.code): \(refused.stderr)")
        #expect(try other.listJSON(["--all"]).isEmpty)
    }
}
