// swift-tools-version: 6.1
// SPDX-License-Identifier: GPL-3.0-or-later
// Nu11VLT — a zero-network encrypted vault for photos and notes.
//
// Layers (each depends only on the ones before it):
//   Nu11Format  — bytes in, bytes out: keys, key wrapping, chunked AEAD, the .n11 envelope
//   Nu11Storage — protected atomic files, the key store, the index, settings
//   Nu11Media   — images: libvips thumbnails, EXIF, location stripping (beside Storage)
//   Nu11Vault   — the vault facade: unlock, photos, albums, deletion
//   nu11vlt     — the command line (thin)
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Nu11VLT",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "Nu11Vault", targets: ["Nu11Vault"]),
        .executable(name: "nu11vlt", targets: ["nu11vlt"]),
        .executable(name: "nu11vlt-image-helper", targets: ["nu11vlt-image-helper"]),
        .executable(name: "nu11vlt-app", targets: ["nu11vlt-app"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
        .package(url: "https://github.com/apple/swift-system", exact: "1.8.1"),
        .package(url: "https://github.com/apple/swift-collections", exact: "1.6.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .target(
            name: "Nu11Format",
            dependencies: [
                "CSodium",
                "CNu11Cipher",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["mutants.txt"],
            swiftSettings: strict
        ),
        // The chunk cipher: OpenSSL 3 libcrypto EVP (Debian libssl-dev), the fastest ChaCha20-Poly1305
        // and AES-256-GCM measured here (bench/run, row "cipher"); swift-crypto keeps HKDF.
        .target(name: "CNu11Cipher", exclude: ["mutants.txt"], linkerSettings: [.linkedLibrary("crypto")]),
        // The TPM 2.0 (tpm2-tss ESAPI, Debian libtss2-dev) behind a small C face.
        .target(
            name: "CNu11TPM",
            exclude: ["mutants.txt"],
            linkerSettings: [.linkedLibrary("tss2-esys"), .linkedLibrary("tss2-tctildr"), .linkedLibrary("tss2-mu"),
                             .linkedLibrary("tss2-rc"), .linkedLibrary("tss2-sys")]
        ),
        // FIDO2 security keys (libfido2, Debian libfido2-dev) behind a small C face. Debug builds add
        // the AF_UNIX transport to the project's software authenticator (tests only).
        .target(
            name: "CNu11Fido",
            cSettings: [.define("N11FIDO_TEST_TRANSPORT", .when(configuration: .debug))],
            linkerSettings: [.linkedLibrary("fido2"), .linkedLibrary("crypto")]
        ),
        .target(
            name: "Nu11Storage",
            dependencies: [
                "Nu11Format",
                "CNu11Sys",
                "CNu11TPM",
                "CNu11Fido",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            exclude: ["mutants.txt"],
            swiftSettings: strict
        ),
        // Photos: libvips (decoding from memory, trusted loaders only) behind a C face.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // Videos: FFmpeg's libraries (Debian's libavformat-dev, libavcodec-dev, libswscale-dev),
        // in the same helper, under the same lock-down.
        .target(
            name: "CNu11Image",
            dependencies: ["CVips"],
            exclude: ["mutants.txt"],
            linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swscale"), .linkedLibrary("avutil")]
        ),
        // Pure Swift (no image library): formats, EXIF, location stripping, and the client of
        // the image helper process.
        .target(
            name: "Nu11Media",
            dependencies: ["Nu11Format", "CNu11Sys", .product(name: "SystemPackage", package: "swift-system")],
            exclude: ["mutants.txt"],
            swiftSettings: strict
        ),
        // libvips, linked only into the helper process (which holds no key).
        .target(
            name: "Nu11ImageCodec",
            dependencies: ["Nu11Media", "CNu11Image"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "nu11vlt-image-helper",
            dependencies: ["Nu11ImageCodec", "Nu11Media", "CNu11Image", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        .target(
            name: "Nu11Vault",
            dependencies: ["Nu11Format", "Nu11Storage", "Nu11Media"],
            exclude: ["mutants.txt"],
            swiftSettings: strict
        ),
        .target(name: "CNu11Sys", exclude: ["mutants.txt"]),
        // The unlock agent's watch on logind (suspend, screen lock) over D-Bus: GIO's GDBus
        // (Debian libglib2.0-dev; libvips links GLib already), behind a small C face.
        .systemLibrary(name: "CGio", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .target(name: "CNu11Session", dependencies: ["CGio"]),
        // The release's version, stamped from the VERSION file at build time (one place).
        .executableTarget(name: "nu11vlt-version-stamp", path: "Sources/nu11vlt-version-stamp"),
        .plugin(name: "VersionStamp", capability: .buildTool(), dependencies: ["nu11vlt-version-stamp"]),
        .target(name: "Nu11Release", swiftSettings: strict, plugins: ["VersionStamp"]),
        .executableTarget(
            name: "nu11vlt",
            dependencies: [
                "Nu11Vault",
                "Nu11Media",
                "CNu11Sys",
                "CNu11Session",
                "Nu11Release",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["mutants.txt"],
            swiftSettings: strict
        ),
        // The desktop app: GTK 4 + libadwaita (Debian libgtk-4-dev, libadwaita-1-dev) through a
        // system-library target and a small C face for what Swift cannot call (variadic functions).
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "libadwaita-1",
            providers: [.apt(["libadwaita-1-dev", "libgtk-4-dev"])]
        ),
        .target(name: "CNu11Gtk", dependencies: ["CGtk"], linkerSettings: [.linkedLibrary("epoxy")]),
        .executableTarget(
            name: "nu11vlt-app",
            dependencies: ["Nu11Vault", "Nu11Media", "CNu11Sys", "CGtk", "CNu11Gtk", "Nu11Release"],
            swiftSettings: strict
        ),
        // Fuzzing (developer tools): harness bodies, and a libFuzzer/corpus-replay driver.
        .target(name: "Nu11Fuzz", dependencies: ["Nu11Vault", "Nu11Storage", "Nu11Format", "Nu11Media"], swiftSettings: strict),
        .executableTarget(name: "nu11vlt-fuzz", dependencies: ["Nu11Fuzz"], swiftSettings: strict),
        // The cipher candidates measured side by side (bench/run).
        .target(name: "Nu11CipherBench", dependencies: ["Nu11Format", "CSodium", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: strict),
        .executableTarget(name: "nu11vlt-cipher-bench", dependencies: ["Nu11CipherBench", "Nu11Format"], swiftSettings: strict),
        // The sync journal's read and merge measured (bench/run, row 15; issue 60).
        .executableTarget(name: "nu11vlt-sync-bench", dependencies: ["Nu11Vault", "Nu11Storage", "Nu11Format"], swiftSettings: strict),
        // What several test targets share (the one helper that starts a program); under Tests/,
        // as nothing in Sources may spawn with Foundation's Process.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        // zlib is only needed by the tests, to inflate the Wycheproof vectors.
        .systemLibrary(name: "CNu11Zlib", providers: [.apt(["zlib1g-dev"])]),
        .testTarget(
            name: "Nu11FormatTests",
            dependencies: ["Nu11Format", "Nu11CipherBench", "CNu11Zlib", "TestSupport"],
            resources: [.copy("Vectors")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "Nu11StorageTests",
            dependencies: ["Nu11Storage", "CNu11Sys"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "Nu11VaultTests",
            dependencies: ["Nu11Vault", "TestSupport"],
            resources: [.copy("Vectors")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "Nu11MediaTests",
            dependencies: ["Nu11Media", "Nu11ImageCodec", "Nu11Format"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FuzzReplayTests",
            dependencies: ["Nu11Fuzz", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["nu11vlt", "TestSupport"],
            swiftSettings: strict
        ),
    ]
)
