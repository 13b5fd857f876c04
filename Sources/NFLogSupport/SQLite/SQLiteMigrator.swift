/// A numbered schema change. Never edit one that has shipped: add a new one.
@_spi(NFLogShared) public struct SQLiteMigration: Sendable {
    @_spi(NFLogShared) public let version: Int32
    @_spi(NFLogShared) public let name: String
    @_spi(NFLogShared) public let sql: String

    @_spi(NFLogShared) public init(version: Int32, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// Applies ordered migrations, each in its own transaction, recording the last one applied in
/// `PRAGMA user_version`.
@_spi(NFLogShared) public enum SQLiteMigrator {
    /// Brings the database up to `target` (default: the last migration).
    /// - Throws: when the database is newer than `migrations` know, or a migration fails (it is
    ///   rolled back and the database keeps its previous version).
    @_spi(NFLogShared) public static func migrate(_ connection: SQLiteConnection, _ migrations: [SQLiteMigration],
                               upTo target: Int32? = nil) throws(SQLiteError) {
        let latest = migrations.last?.version ?? 0
        let target = target ?? latest
        let current = Int32(truncatingIfNeeded: try connection.scalarInt("PRAGMA user_version"))
        if current > latest {
            throw SQLiteError(code: 1, message: "the database has schema version \(current), newer than this software understands (\(latest)); it was written by a newer release")
        }
        for migration in migrations where migration.version > current && migration.version <= target {
            try connection.transaction { () throws(SQLiteError) in
                // Another process may have migrated while we waited for the write lock.
                let now = try connection.scalarInt("PRAGMA user_version")
                guard now < migration.version else { return }
                try connection.execute(migration.sql)
                try connection.execute("PRAGMA user_version = \(migration.version)")
            }
        }
    }
}

extension SQLiteConnection {
    /// Switches to write-ahead logging: readers never block the writer. With
    /// `synchronous=NORMAL` (the default here) commits survive a crash of the process and cost no
    /// fsync; with `durableCommits`, `synchronous=FULL`: each commit is fsynced before it returns,
    /// so it survives a power cut or an OS crash too.
    @_spi(NFLogShared) public func enableWriteAheadLog(durableCommits: Bool = false) throws(SQLiteError) {
        let journal = try scalarText("PRAGMA journal_mode = WAL")
        guard journal?.lowercased() == "wal" else {
            throw SQLiteError(code: 1, message: "SQLite refused WAL journaling (journal_mode is \(journal ?? "unknown"))")
        }
        try execute(durableCommits ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
    }
}
