/// An error reported by SQLite, with the statement that caused it.
package struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite's extended result code (for example `13` is `SQLITE_FULL`, `5` is `SQLITE_BUSY`).
    package let code: Int32
    /// SQLite's message, or the caller's own when SQLite was not involved.
    package let message: String
    /// The statement that failed, when there was one.
    package let statement: String?

    package init(code: Int32, message: String, statement: String? = nil) {
        self.code = code
        self.message = message
        self.statement = statement
    }

    /// SQLite's primary result code: the low byte of ``code``.
    package var primaryCode: Int32 { code & 0xFF }

    /// Whether SQLite refused one row (a constraint, a value too big or of the wrong type)
    /// rather than the database as a whole.
    package var isAboutOneRow: Bool {
        switch primaryCode {
        case 18 /* TOOBIG */, 19 /* CONSTRAINT */, 20 /* MISMATCH */, 25 /* RANGE */: true
        default: false
        }
    }

    /// Whether the statement was interrupted: by ``SQLiteConnection/withDeadline(_:checkEvery:_:)``
    /// once its deadline passed (`SQLITE_INTERRUPT`).
    package var isInterrupt: Bool { primaryCode == 9 }

    package var description: String {
        var text = "SQLite error \(code): \(message)"
        if let statement { text += " (while executing: \(statement))" }
        return text
    }
}
