import ArgumentParser
import Foundation
import NFLogCollector

/// Where `serve` keeps events, and where `report` and `export` read them: a SQLite file (`--db`),
/// or a PostgreSQL database shared with other collectors (`--store postgres://…` or
/// `--postgres URL`). The PostgreSQL password is never an argument: `--password-file`, else
/// PGPASSWORD.
struct StoreOptions: ParsableArguments {
    @Option(help: "The SQLite database file (serve creates it if missing).")
    var db: String?

    @Option(help: "The store: a PostgreSQL URL postgres://USER@HOST:PORT/DB[?sslmode=require|verify-full] (several collectors may share it), or a SQLite file path (as --db).")
    var store: String?

    @Option(help: "A PostgreSQL URL, as --store postgres://….")
    var postgres: String?

    @Option(help: "PostgreSQL connections this collector opens at most.")
    var poolSize: Int = 8

    @Option(help: "A file whose first line is the PostgreSQL password (without it, PGPASSWORD is read).")
    var passwordFile: String?

    /// The PostgreSQL URL, if one was given.
    private var postgresURL: String? {
        if let postgres { return postgres }
        if let store, store.hasPrefix("postgres://") || store.hasPrefix("postgresql://") { return store }
        return nil
    }

    func validate() throws {
        let given = [db, store, postgres].compactMap { $0 }
        guard given.count == 1 else { throw ValidationError("give exactly one of --db PATH, --store URL|PATH, --postgres URL") }
        guard (1...1_000).contains(poolSize) else { throw ValidationError("--pool-size must be between 1 and 1000") }
        guard passwordFile == nil || postgresURL != nil else { throw ValidationError("--password-file goes with a PostgreSQL store") }
    }

    /// The SQLite file, unless the store is PostgreSQL.
    var sqlitePath: String? { postgresURL == nil ? (db ?? store ?? "") : nil }

    /// The flag that named the SQLite file.
    private var sqliteFlag: String { db != nil ? "--db" : "--store" }

    func open(readTimeLimit: Duration) async throws -> any EventStore {
        if let postgresURL {
            return try await PostgresEventStore(url: postgresURL, poolSize: poolSize, passwordFile: passwordFile,
                                                readTimeLimit: readTimeLimit)
        }
        return try SQLiteEventStore(path: db ?? store ?? "", readTimeLimit: readTimeLimit)
    }

    /// For `report` and `export`, which only read: a SQLite file is opened read-only and never
    /// created, migrated or written; one that is missing, not a collector database, or of an
    /// older or newer collector's schema is refused, saying so.
    func openExisting(readTimeLimit: Duration) async throws -> any EventStore {
        if let passwordFile { try InputFile.check("--password-file", passwordFile) }
        guard let path = sqlitePath else {
            return try await PostgresEventStore(url: postgresURL ?? "", poolSize: poolSize, passwordFile: passwordFile,
                                                readTimeLimit: readTimeLimit, readingOnly: true)
        }
        do { return try SQLiteEventStore(readingOnly: path, readTimeLimit: readTimeLimit) } catch let error as SQLiteStoreError {
            if error.kind == .noSuchFile { throw CommandFailure("\(sqliteFlag): no such file \(path)") }
            throw CommandFailure(error.description)
        }
    }
}
