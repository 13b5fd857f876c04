import CSQLite

/// SQLite's "copy the bytes now" destructor: bound values need not outlive the bind call.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// SQLite's "the bytes stay put" destructor: SQLite reads them in place until they are unbound.
private let SQLITE_STATIC = unsafeBitCast(0, to: sqlite3_destructor_type.self)

/// A prepared statement, reused across executions: bind, step, reset.
///
/// Confined, like its connection, to its owner's serial queue.
@_spi(NFLogShared) public final class SQLiteStatement {
    @_spi(NFLogShared) public let handle: OpaquePointer
    @_spi(NFLogShared) public let sql: String
    private unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    // MARK: Binding (indexes start at 1, as in SQLite)
    //
    // Every bind checks SQLite's answer: a value SQLite refuses (SQLITE_TOOBIG, SQLITE_RANGE)
    // must fail the write, not silently store NULL.

    @_spi(NFLogShared) public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    @_spi(NFLogShared) public func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        var value = value
        try check(value.withUTF8 { bindText(UnsafeRawBufferPointer($0), at: index) })
    }

    /// Binds UTF-8 bytes as TEXT (JSON is stored as text so SQL's JSON functions can read it).
    @_spi(NFLogShared) public func bindText(_ bytes: [UInt8]?, at index: Int32) throws(SQLiteError) {
        guard let bytes else { return try bindNull(at: index) }
        try check(bytes.withUnsafeBytes { bindText($0, at: index) })
    }

    /// Returns SQLite's result code; the callers check it outside the buffer's closure.
    private func bindText(_ bytes: UnsafeRawBufferPointer, at index: Int32) -> Int32 {
        guard let length = Int32(exactly: bytes.count) else { return SQLITE_TOOBIG }
        // A non-nil pointer even for empty text: SQLite binds NULL for a nil pointer.
        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
        return sqlite3_bind_text(handle, index, base?.assumingMemoryBound(to: CChar.self), length, SQLITE_TRANSIENT)
    }

    @_spi(NFLogShared) public func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    @_spi(NFLogShared) public func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws(SQLiteError) {
        guard let length = Int32(exactly: bytes.count) else { return try check(SQLITE_TOOBIG) }
        try check(sqlite3_bind_blob(handle, index, bytes.baseAddress, length, SQLITE_TRANSIENT))
    }

    /// Binds bytes as a BLOB; `nil` binds NULL.
    @_spi(NFLogShared) public func bindBlob(_ bytes: [UInt8]?, at index: Int32) throws(SQLiteError) {
        guard let bytes else { return try bindNull(at: index) }
        guard let length = Int32(exactly: bytes.count) else { return try check(SQLITE_TOOBIG) }
        try check(bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, length, SQLITE_TRANSIENT) })
    }

    @_spi(NFLogShared) public func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index))
    }

    // MARK: Binding without a copy
    //
    // The bytes are lent to SQLite (SQLITE_STATIC) only while `body` runs, and `body` must run
    // the statement (``run()``, which resets it and clears every binding) before it returns; if
    // anything throws, the statement is reset and its bindings cleared before the bytes go. So
    // SQLite never holds a pointer past the closure that lends it.

    /// Lends every byte of `arena` to SQLite while `body` runs (see above): `body` binds slices
    /// of it through the ``LentBytes`` it is given, then runs the statement. One buffer for all
    /// of a multi-row statement's texts and blobs keeps the binding flat: lending each value
    /// through its own closure nested every row's closures inside the last (~2,300 bytes of
    /// stack per row in a release build).
    @_spi(NFLogShared) public func lending(arena: [UInt8], _ body: (LentBytes) throws(SQLiteError) -> Void) throws(SQLiteError) {
        var failure: SQLiteError?
        arena.withUnsafeBytes { buffer in
            do throws(SQLiteError) { try body(LentBytes(statement: self, buffer: buffer)) } catch {
                reset()  // nothing stays bound to the buffer after it goes
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Binds `length` bytes at `base` in place (SQLITE_STATIC): the caller keeps them alive until
    /// the statement is reset.
    fileprivate func bindStatic(_ base: UnsafeRawPointer, length: Int32, asText: Bool, at index: Int32) throws(SQLiteError) {
        try check(asText ? sqlite3_bind_text(handle, index, base.assumingMemoryBound(to: CChar.self), length, SQLITE_STATIC)
                         : sqlite3_bind_blob(handle, index, base, length, SQLITE_STATIC))
    }

    private func check(_ rc: Int32) throws(SQLiteError) {
        guard rc != SQLITE_OK else { return }
        if rc == SQLITE_TOOBIG { throw SQLiteError(code: rc, message: "a value is too big to store", statement: sql) }
        throw connection.error(rc, sql)
    }

    // MARK: Execution

    /// Advances the statement. Returns `true` while there is a row to read.
    @_spi(NFLogShared) public func step() throws(SQLiteError) -> Bool {
        connection.statementsRun &+= 1
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(rc, sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows, then resets it for the next use.
    @_spi(NFLogShared) public func run() throws(SQLiteError) {
        defer { reset() }
        _ = try step()
    }

    /// Steps through every row, collecting them, then resets the statement.
    @_spi(NFLogShared) public func collect<T>(_ row: (SQLiteStatement) -> T) throws(SQLiteError) -> [T] {
        defer { reset() }
        var rows: [T] = []
        while try step() { rows.append(row(self)) }
        return rows
    }

    /// Resets the statement and clears its bindings so no value leaks into the next use.
    @_spi(NFLogShared) public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Reading columns (indexes start at 0, as in SQLite)

    /// Rows changed by the last run of a statement on this connection.
    @_spi(NFLogShared) public var changes: Int { connection.changes }

    @_spi(NFLogShared) public func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    @_spi(NFLogShared) public func double(at column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    @_spi(NFLogShared) public func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    @_spi(NFLogShared) public func text(at column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    @_spi(NFLogShared) public func blob(at column: Int32) -> [UInt8]? {
        guard let pointer = sqlite3_column_blob(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// The bytes ``SQLiteStatement/lending(arena:_:)`` lends, valid only inside its `body`: binds
/// slices of them in place (SQLITE_STATIC), by offset and length.
@_spi(NFLogShared) public struct LentBytes {
    fileprivate let statement: SQLiteStatement
    fileprivate let buffer: UnsafeRawBufferPointer

    /// Binds `count` bytes at `offset` as TEXT or a BLOB at `index`; `nil` binds NULL.
    @_spi(NFLogShared) public func bind(offset: Int, count: Int?, asText: Bool, at index: Int32) throws(SQLiteError) {
        guard let count else { return try statement.bindNull(at: index) }
        guard offset >= 0, count >= 0, count <= buffer.count &- offset, let base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
              let length = Int32(exactly: count) else {
            throw SQLiteError(code: SQLITE_RANGE, message: "a lent slice lies outside its buffer", statement: statement.sql)
        }
        try statement.bindStatic(base + offset, length: length, asText: asText, at: index)
    }
}
