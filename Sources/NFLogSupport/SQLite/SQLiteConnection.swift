import CSQLite

/// One SQLite connection.
///
/// Not thread-safe by design: each owner confines its connection to one serial queue (the SDK's
/// RequestManager, the collector's store), so the connection is opened with `SQLITE_OPEN_NOMUTEX`
/// and SQLite's own per-call locking is skipped.
@_spi(NFLogShared) public final class SQLiteConnection {
    @_spi(NFLogShared) public let handle: OpaquePointer
    @_spi(NFLogShared) public let path: String

    /// How a connection opens its file.
    @_spi(NFLogShared) public enum OpenMode: Sendable {
        /// Read and write, creating the file if missing.
        case readWriteCreate
        /// Read only (`SQLITE_OPEN_READONLY`): never creates the file, and every write fails.
        case readOnly
        /// Read only, taking no locks and reading no write-ahead log (`immutable=1`): for a look
        /// at a file that must not be touched at all, when nothing else is writing it.
        case immutable
    }

    /// Opens the database at `path`: by default for reading and writing, created if missing.
    @_spi(NFLogShared) public init(path: String, busyTimeoutMilliseconds: Int32, mode: OpenMode = .readWriteCreate) throws(SQLiteError) {
        var db: OpaquePointer?
        var name = path
        var flags = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .immutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            name = "file:" + Self.uriPath(path) + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot allocate a connection"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "\(message) (opening \(path))")
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        self.handle = db
        self.path = path
    }

    /// `path` for a `file:` URI: the characters a URI gives a meaning to, percent-encoded.
    private static func uriPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x21, 0x7f...:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            default: out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }

    /// Whether the file is open read-only: opened so, or SQLite could not open it for writing
    /// (a read-only file opens for reading without an error, and fails at the first write).
    @_spi(NFLogShared) public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    deinit {
        // close_v2 defers the close until every statement is finalized, so order does not matter.
        sqlite3_close_v2(handle)
    }

    /// Statements run on this connection (each step of a prepared statement, each `execute`):
    /// what an idle logger must not add to. Confined, like the connection, to its owner's queue.
    @_spi(NFLogShared) public internal(set) var statementsRun = 0

    /// Runs one or more statements that return no rows the caller needs.
    @_spi(NFLogShared) public func execute(_ sql: String) throws(SQLiteError) {
        statementsRun &+= 1
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, statement: sql)
        }
    }

    @_spi(NFLogShared) public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw error(rc, sql)
        }
        return SQLiteStatement(handle: statement, sql: sql, connection: self)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws or the commit fails.
    ///
    /// `IMMEDIATE` takes the write lock up front, so a busy database is reported (after the busy
    /// timeout) before any work is done rather than at commit.
    @_spi(NFLogShared) public func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }

    /// Rolls back an open transaction, if SQLite has not already done so.
    @_spi(NFLogShared) public func rollbackIfNeeded() {
        if sqlite3_get_autocommit(handle) == 0 {
            sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        }
    }

    /// Reads a single integer, such as `PRAGMA user_version` or `SELECT count(*)`.
    @_spi(NFLogShared) public func scalarInt(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    /// Reads a single text value, such as `PRAGMA journal_mode`.
    @_spi(NFLogShared) public func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    @_spi(NFLogShared) public var changes: Int { Int(sqlite3_changes(handle)) }
    @_spi(NFLogShared) public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    @_spi(NFLogShared) public var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ rc: Int32, _ sql: String?) -> SQLiteError {
        // The extended code is more precise (SQLITE_IOERR_WRITE rather than SQLITE_IOERR).
        let extended = sqlite3_extended_errcode(handle)
        return SQLiteError(code: extended != 0 ? extended : rc, message: lastErrorMessage, statement: sql)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
