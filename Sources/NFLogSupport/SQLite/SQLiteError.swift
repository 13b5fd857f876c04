/// An error reported by SQLite, with the statement that caused it.
@_spi(NFLogShared) public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite's extended result code (for example `13` is `SQLITE_FULL`, `5` is `SQLITE_BUSY`).
    @_spi(NFLogShared) public let code: Int32
    /// SQLite's message, or the caller's own when SQLite was not involved.
    @_spi(NFLogShared) public let message: String
    /// The statement that failed, when there was one.
    @_spi(NFLogShared) public let statement: String?

    @_spi(NFLogShared) public init(code: Int32, message: String, statement: String? = nil) {
        self.code = code
        self.message = message
        self.statement = statement
    }

    /// SQLite's primary result code: the low byte of ``code``.
    @_spi(NFLogShared) public var primaryCode: Int32 { code & 0xFF }

    /// Whether SQLite refused one row (a constraint, a value too big or of the wrong type)
    /// rather than the database as a whole.
    @_spi(NFLogShared) public var isAboutOneRow: Bool {
        switch primaryCode {
        case 18 /* TOOBIG */, 19 /* CONSTRAINT */, 20 /* MISMATCH */, 25 /* RANGE */: true
        default: false
        }
    }

    /// Whether the statement was interrupted: by ``SQLiteConnection/withDeadline(_:checkEvery:_:)``
    /// once its deadline passed (`SQLITE_INTERRUPT`).
    @_spi(NFLogShared) public var isInterrupt: Bool { primaryCode == 9 }

    @_spi(NFLogShared) public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let statement { text += " (while executing: \(statement))" }
        return text
    }
}
