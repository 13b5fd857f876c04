import Foundation
import NFLogSupport

/// The one owner of the SQLite connection: opens it (WAL, `synchronous=NORMAL`, busy timeout,
/// migrations), prepares the tables, and applies batches of ``StorageRequest``s in one
/// transaction each.
///
/// Used only on the RequestManager's serial queue, which is what makes its mutable state safe.
final class DatabaseManager {
    let path: String
    private let busyTimeoutMilliseconds: Int32
    private let contextJSON: String

    /// Everything that exists only while the database is open.
    private struct Open {
        let connection: SQLiteConnection
        let tables: EventTableFactory
        let sessions: SessionTable
        let outbox: Outbox
    }
    private var open: Open?
    /// Row ids known to be committed: a cache, cleared whenever a transaction fails.
    private var contextRowID: Int64?
    private var sessionRowIDs: [UUID: Int64] = [:]
    private(set) var lastError: StorageError?
    /// Set by ``close()``: a closed manager never reopens the file.
    private var isClosed = false

    init(path: String, busyTimeoutMilliseconds: Int32, properties: StandardProperties) {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.contextJSON = properties.canonicalJSON()
    }

    /// Opens the database if it is not open. Failing is not final: the next call tries again,
    /// so logging resumes by itself once the cause (a full disk, a locked file) goes away.
    @discardableResult
    func openIfNeeded() throws(SQLiteError) -> SQLiteConnection {
        try openDatabase().connection
    }

    private func openDatabase() throws(SQLiteError) -> Open {
        if let open { return open }
        if isClosed { throw SQLiteError(code: 21, message: "the database was closed with the logger") }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(code: 14, message: "cannot create the directory \(directory): \(error.localizedDescription)")
            }
        }
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try connection.enableWriteAheadLog()
        try Schema.migrate(connection)
        let tables = try EventTableFactory(connection: connection)
        let opened = Open(connection: connection, tables: tables,
                          sessions: try SessionTable(connection: connection),
                          outbox: try Outbox(connection: connection, tables: tables))
        open = opened
        return opened
    }

    /// Closes the connection for good, as the logger closes.
    func close() {
        isClosed = true
        dropConnection()
    }

    /// Drops the connection after a failure; the next request reopens the file.
    private func dropConnection() {
        open = nil
        forgetUncommittedRowIDs()
    }

    /// Row ids learned inside a failed transaction were rolled back with it.
    private func forgetUncommittedRowIDs() {
        contextRowID = nil
        sessionRowIDs = [:]
    }

    /// Applies `requests` in one transaction and returns one status per request, in order.
    ///
    /// Either the whole batch commits, and each request gets its own outcome (`.recorded`, or a
    /// `.failed` that changed nothing, such as ending an unknown span), or nothing does. Then, if
    /// SQLite refused one row (a constraint, a value too big), each request is retried in a
    /// transaction of its own so the others are not failed with it; if the database as a whole
    /// failed (full, read-only, busy, damaged), every request gets that storage error.
    func write(_ requests: some Collection<StorageRequest>) -> [LogStatus] {
        do throws(SQLiteError) {
            let db = try openDatabase()
            var statuses: [LogStatus] = []
            statuses.reserveCapacity(requests.count)
            try db.connection.transaction { () throws(SQLiteError) in
                for request in requests {
                    statuses.append(try apply(request, db))
                }
            }
            lastError = nil
            return statuses
        } catch {
            forgetUncommittedRowIDs()
            if requests.count > 1 && error.isAboutOneRow {
                return requests.map { write(CollectionOfOne($0))[0] }
            }
            lastError = StorageError(error)
            if error.primaryCode != 5 /* SQLITE_BUSY: the connection is fine, just wait */ { dropConnection() }
            return Array(repeating: .failed(.storage(StorageError(error))), count: requests.count)
        }
    }

    /// Runs `body` with the outbox inside one transaction. On failure everything is rolled back
    /// and the error is remembered, as for writes.
    func withOutbox<T>(_ body: (Outbox) throws(SQLiteError) -> T) throws(StorageError) -> T {
        do throws(SQLiteError) {
            let db = try openDatabase()
            return try db.connection.transaction { () throws(SQLiteError) -> T in try body(db.outbox) }
        } catch {
            forgetUncommittedRowIDs()
            lastError = StorageError(error)
            if error.primaryCode != 5 /* SQLITE_BUSY */ { dropConnection() }
            throw StorageError(error)
        }
    }

    private func apply(_ request: StorageRequest, _ db: Open) throws(SQLiteError) -> LogStatus {
        switch request {
        case .event(let event):
            let session = try sessionRowID(event.session, db)
            try db.tables.table(for: event.draft.kind).insert(event, sessionRowID: session)
            return .recorded(event.id)
        case .endSpan(let end):
            switch try db.tables.spans.end(end) {
            case .ended: return .recorded(end.id)
            case .unknown: return .failed(.unknownSpan(end.id))
            case .alreadyEnded: return .failed(.spanAlreadyEnded(end.id))
            }
        case .sessionSuspended(let session, let milliseconds):
            try db.sessions.setEnded(session, at: milliseconds)
            return .recorded(session.id)
        case .sessionResumed(let session):
            try db.sessions.setEnded(session, at: nil)
            return .recorded(session.id)
        }
    }

    private func sessionRowID(_ session: Session, _ db: Open) throws(SQLiteError) -> Int64 {
        if let known = sessionRowIDs[session.id] { return known }
        let context: Int64
        if let contextRowID { context = contextRowID } else {
            context = try db.sessions.contextRowID(properties: contextJSON)
            contextRowID = context
        }
        let rowID = try db.sessions.sessionRowID(session, contextRowID: context)
        sessionRowIDs[session.id] = rowID
        return rowID
    }

    /// What is stored, for diagnostics.
    func storedCounts() throws(SQLiteError) -> (points: Int, spans: Int, openSpans: Int) {
        let db = try openDatabase()
        return (try db.tables.points.count(), try db.tables.spans.count(), try db.tables.spans.openCount())
    }
}
