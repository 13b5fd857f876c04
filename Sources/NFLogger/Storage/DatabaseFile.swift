import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The database file, and how a connection to it is made ready: its directory, the write-ahead
/// log and its limits, an integrity check, the numbered migrations, and the match with the
/// configured encryption key.
///
/// It keeps no state: the DatabaseManager opens it on the RequestManager's queue, and owns the
/// connection it returns.
struct DatabaseFile {
    let path: String
    let busyTimeoutMilliseconds: Int32
    /// Seals parameters at rest, when the configuration holds a key.
    let cipher: ParameterCipher?

    /// A bare connection: no checks, no migrations.
    func connect() throws(SQLiteError) -> SQLiteConnection {
        try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    /// Opens the file, creating it (and its directory) if needed, at the current schema.
    /// - Parameter maxBytes: the byte limit; the log is kept to a small part of it.
    func open(maxBytes: Int) throws(SQLiteError) -> SQLiteConnection {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(code: 14, message: "cannot create the directory \(directory): \(error.localizedDescription)")
            }
        }
        let connection = try connect()
        if try connection.scalarInt("PRAGMA user_version") == 0 {
            // Only possible before the first table exists: lets the Pruner give pages back to the disk.
            try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        }
        try connection.enableWriteAheadLog()
        if let problem = try connection.scalarText("PRAGMA quick_check(1)"), problem != "ok" {
            throw SQLiteError(code: 11, message: "quick_check: \(problem)")
        }
        // After a checkpoint, the log file is cut back to this size instead of staying at its peak,
        // and checkpoints come often enough that the log stays a small part of the byte limit.
        try connection.execute("PRAGMA journal_size_limit = \(min(4 << 20, maxBytes / 8))")
        try connection.execute("PRAGMA wal_autocheckpoint = \(max(16, min(1_000, maxBytes / 8 / 4_096)))")
        try Schema.migrate(connection)
        if cipher != nil {
            // Deleted values (delivered, pruned) are overwritten, not left in the file's slack.
            try connection.execute("PRAGMA secure_delete = ON")
        }
        try AtRestEncryption.prepare(connection, cipher: cipher) { () throws(SQLiteError) in
            try LiveProcessRegistry(connection: connection).anotherProcessHasItOpen()
        }
        return connection
    }
}
