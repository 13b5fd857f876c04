import NFLogSupport

/// A failure reported by the SDK's SQLite storage.
///
/// It carries SQLite's result code and message and, when a statement was involved, the SQL that
/// failed, so a report says what went wrong without a debugger.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite's extended result code (for example `13` is `SQLITE_FULL`, `5` is `SQLITE_BUSY`).
    public let code: Int32
    /// SQLite's message for the failure, or the SDK's own when SQLite was not involved.
    public let message: String
    /// The statement that failed, when there was one.
    public let statement: String?

    /// SQLite's primary result code: the low byte of ``code``.
    public var primaryCode: Int32 { code & 0xFF }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let statement { text += " (while executing: \(statement))" }
        return text
    }

    init(_ error: SQLiteError) {
        code = error.code
        message = error.message
        statement = error.statement
    }
}
