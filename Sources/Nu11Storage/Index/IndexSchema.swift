// SPDX-License-Identifier: GPL-3.0-or-later
import GRDB

/// The index schema. Migrations are append-only and never reference app types (GRDB's
/// rule): once shipped, a migration is never edited; changes come as new migrations.
///
/// Only what must be read in the clear is in the clear: opaque IDs, the domain, the kind,
/// the album an item sits in (an opaque ID), and an insertion sequence for paging. Names,
/// sizes, types and dates live in `meta`/`name`, sealed under the domain's metadata subkey.
enum IndexSchema {
    /// Every table and column the migrations make: an index whose tables differ (renamed,
    /// dropped, altered by hand or by a damaged page) is damaged, not an I/O error.
    static let shape: [(table: String, columns: [String])] = [
        ("album", ["id", "domain", "name"]),
        ("item", ["id", "seq", "kind", "domain", "album", "meta", "quarantined"]),
        ("vault", ["one", "id"]),
        ("recovery", ["id", "seal", "next"]),
        ("sidecars", ["domain"]),
    ]

    /// Throws SQLite's error when a table or column of `shape` is missing.
    static func verifyShape(_ db: Database) throws {
        for (table, columns) in shape {
            try db.execute(sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table) LIMIT 0")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: albums and items") { db in
            try db.execute(sql: """
                CREATE TABLE album (
                    id      TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
                    domain  INTEGER NOT NULL CHECK (domain BETWEEN 1 AND 4),
                    name    BLOB NOT NULL CHECK (length(name) > 28)
                ) STRICT;
                CREATE TABLE item (
                    id      TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
                    seq     INTEGER NOT NULL UNIQUE,
                    kind    INTEGER NOT NULL CHECK (kind IN (1, 2)),
                    domain  INTEGER NOT NULL CHECK (domain BETWEEN 1 AND 4),
                    album   TEXT REFERENCES album(id) ON DELETE RESTRICT,
                    meta    BLOB NOT NULL CHECK (length(meta) > 28)
                ) STRICT;
                CREATE INDEX item_domain_seq ON item(domain, seq);
                CREATE INDEX item_album_seq ON item(album, seq);
                """)
        }
        migrator.registerMigration("v2: quarantine flag") { db in
            try db.execute(sql: "ALTER TABLE item ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0, 1))")
        }
        migrator.registerMigration("v3: vault ID") { db in
            // One row: the random ID that pairs this index with its key store.
            try db.execute(sql: """
                CREATE TABLE vault (
                    one  INTEGER PRIMARY KEY CHECK (one = 1),
                    id   TEXT NOT NULL CHECK (length(id) = 32)
                ) STRICT
                """)
        }
        migrator.registerMigration("v4: recovery seals") { db in
            // Each item key sealed to the recovery phrase's public key (docs/FORMAT.md §5.2);
            // deleted with its item (secure_delete zeroes it).
            try db.execute(sql: """
                CREATE TABLE recovery (
                    id    TEXT PRIMARY KEY NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                    seal  BLOB NOT NULL CHECK (length(seal) = 92)
                ) STRICT
                """)
        }
        migrator.registerMigration("v5: sidecars") { db in
            // The domains whose items all have their sidecar (docs/FORMAT.md §2.2, §5.3):
            // a vault made before sidecars gets them at the first unlock of each domain.
            try db.execute(sql: "CREATE TABLE sidecars (domain INTEGER PRIMARY KEY NOT NULL) STRICT")
            // A `recovery setup` in progress: each item's seal to the new phrase, made before
            // the phrase takes effect (docs/FORMAT.md §5.2), so that one phrase or the other
            // recovers the vault at every instant.
            try db.execute(sql: "ALTER TABLE recovery ADD COLUMN next BLOB CHECK (next IS NULL OR length(next) = 92)")
        }
        return migrator
    }
}
