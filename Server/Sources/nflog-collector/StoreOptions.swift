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

    func open(readTimeLimit: Duration) async throws -> any EventStore {
        if let postgresURL {
            return try await PostgresEventStore(url: postgresURL, poolSize: poolSize, passwordFile: passwordFile,
                                                readTimeLimit: readTimeLimit)
        }
        return try SQLiteEventStore(path: db ?? store ?? "", readTimeLimit: readTimeLimit)
    }

    /// For `report` and `export`, which read a store that exists: a SQLite file that is not there
    /// is an error, not a new database.
    func openExisting(readTimeLimit: Duration) async throws -> any EventStore {
        if postgresURL == nil {
            let path = db ?? store ?? ""
            guard FileManager.default.fileExists(atPath: path) else { throw ValidationError("no database at \(path)") }
        }
        return try await open(readTimeLimit: readTimeLimit)
    }
}
