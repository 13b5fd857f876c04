@_spi(NFLogShared) import NFLogSupport

/// A failure of the SDK's on-device storage: a named ``reason`` to act on, and a
/// ``description`` with SQLite's detail (result code, message, the statement) for a report.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms an app can act on. New reasons may be added in any release:
    /// compare with `==` (a `switch` over it needs a `default`).
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        public let description: String
        private init(_ description: String) { self.description = description }

        /// The disk (or the file-size limit) is full: events fail until space returns.
        public static let diskFull = Reason("disk full")
        /// Another connection holds the database; the next write tries again.
        public static let locked = Reason("locked")
        /// The file is not a healthy SQLite database; the SDK moves it aside and starts afresh.
        public static let damaged = Reason("damaged")
        /// The file or its directory cannot be written.
        public static let readOnly = Reason("read-only")
        /// The file cannot be opened (a missing directory, permissions).
        public static let cannotOpen = Reason("cannot open")
        /// The database is encrypted and no ``Configuration/encryptionKey`` is configured.
        public static let keyMissing = Reason("encryption key missing")
        /// The database was encrypted with a different key.
        public static let keyMismatch = Reason("encryption key mismatch")
        /// A newer release of the SDK wrote this database; it is left as it is.
        public static let newerSchema = Reason("written by a newer SDK")
        /// The operating system reported an I/O error.
        public static let ioError = Reason("I/O error")
        /// Anything else; the description has SQLite's detail.
        public static let other = Reason("other")
    }

    /// What went wrong.
    public let reason: Reason
    /// SQLite's extended result code (the SDK's own codes for encryption).
    let code: Int32
    /// SQLite's message for the failure, or the SDK's own when SQLite was not involved.
    let message: String
    /// The statement that failed, when there was one.
    let statement: String?

    /// SQLite's primary result code: the low byte of ``code``.
    var primaryCode: Int32 { code & 0xFF }

    public var description: String {
        var text = "\(reason) (SQLite error \(code): \(message)"
        if let statement { text += "; while executing: \(statement)" }
        return text + ")"
    }

    init(_ error: SQLiteError) {
        code = error.code
        message = error.message
        statement = error.statement
        reason = Self.reason(code: error.code, message: error.message)
    }

    private static func reason(code: Int32, message: String) -> Reason {
        if code == AtRestEncryption.keyMissingCode { return .keyMissing }
        if code == AtRestEncryption.keyMismatchCode { return .keyMismatch }
        switch code & 0xFF {
        case 13: return .diskFull                       // SQLITE_FULL
        case 5, 6: return .locked                       // SQLITE_BUSY, SQLITE_LOCKED
        case 11, 26: return .damaged                    // SQLITE_CORRUPT, SQLITE_NOTADB
        case 8: return .readOnly                        // SQLITE_READONLY
        case 14: return .cannotOpen                     // SQLITE_CANTOPEN
        case 10: return .ioError                        // SQLITE_IOERR
        default: return message.contains("newer than this software") ? .newerSchema : .other
        }
    }
}
