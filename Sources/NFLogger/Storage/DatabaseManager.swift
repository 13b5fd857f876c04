import Foundation
import Logging
import NFLogSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one owner of the SQLite connection: opens it (WAL, `synchronous=NORMAL`, busy timeout,
/// migrations), prepares the tables, and applies batches of ``StorageRequest``s in one
/// transaction each.
///
/// Used only on the RequestManager's serial queue, which is what makes its mutable state safe;
/// each entry point checks it (``QueueOwner``, debug builds).
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
        let pruner: Pruner
    }
    private var open: Open?
    /// Row ids known to be committed: a cache, cleared whenever a transaction fails.
    private var contextRowID: Int64?
    private var sessionRowIDs: [UUID: Int64] = [:]
    private(set) var lastError: StorageError?
    /// Set by ``close()``: a closed manager never reopens the file.
    private var isClosed = false
    /// The limits the Pruner enforces (configuration, then policy).
    var limits: StorageLimits
    /// Events stored, as far as this manager knows: exact after open, then counted up on
    /// inserts and only ever over-estimated (deliveries elsewhere are not subtracted), so it is
    /// recounted exactly before anything is pruned.
    private var storedEvents = 0
    /// Upload batches on the network right now (the Uploader keeps this up to date, on the same
    /// queue): the only rows the Pruner must not touch.
    var inFlightBatches: Set<Int64> = []
    /// Totals since this manager started, for diagnostics.
    private(set) var prunedEvents = 0
    private(set) var abandonedSpans = 0

    /// The logger's clock: events are stamped and aged by the same one.
    private let clock: any EventClock
    /// Seals parameters at rest, when the configuration holds a key.
    private let cipher: ParameterCipher?

    /// The SDK's own log: what went wrong with the file, never what events hold.
    private let logger: Logger
    /// The RequestManager's queue: every entry point checks it is called there (debug builds).
    private let owner: QueueOwner

    init(owner: QueueOwner, path: String, busyTimeoutMilliseconds: Int32, properties: StandardProperties, limits: StorageLimits,
         cipher: ParameterCipher? = nil, clock: any EventClock = SystemEventClock(),
         logger: Logger = Logger(label: "nflogger", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.owner = owner
        self.path = path
        self.cipher = cipher
        self.logger = logger
        self.limits = limits
        self.clock = clock
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.contextJSON = properties.canonicalJSON()
    }

    /// Opens the database if it is not open. Failing is not final: the next call tries again,
    /// so logging resumes by itself once the cause (a full disk, a locked file) goes away.
    @discardableResult
    func openIfNeeded() throws(SQLiteError) -> SQLiteConnection {
        owner.check()
        return try openDatabase().connection
    }

    private func openDatabase() throws(SQLiteError) -> Open {
        if let open { return open }
        if isClosed { throw SQLiteError(code: 21, message: "the database was closed with the logger") }
        do {
            return try openFile()
        } catch where AtRestEncryption.isKeyMismatch(error) {
            // Encrypted with another key: its events cannot be read or sent, and must not be mixed
            // with new ones under this key. Moved aside, never deleted, so the right key can still
            // recover them; but not from under another process that is using it.
            if let connection = try? SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds),
               (try? Self.anotherProcessHasItOpen(connection)) != false {
                throw SQLiteError(code: 5, message: "\(error.message), and another process has it open; it is left as it is")
            }
            let reset = moveAside(because: error, suffix: "undecryptable",
                                  what: "the database cannot be opened with the configured key (\(error.message))")
            let opened = try openFile()
            try opened.connection.transaction { () throws(SQLiteError) in
                try opened.outbox.note(kind: "database_reset", detail: reset, at: clock.wallMilliseconds())
            }
            return opened
        } catch where Self.isCorruption(error) {
            // A damaged file is moved aside, never deleted, and a fresh database takes its place.
            let reset = quarantineDamagedFile(because: error)
            let opened = try openFile()
            try opened.connection.transaction { () throws(SQLiteError) in
                try opened.outbox.note(kind: "database_reset", detail: reset, at: clock.wallMilliseconds())
            }
            return opened
        }
    }

    /// The errors that mean the file itself is damaged (as opposed to full, busy or unreadable).
    static func isCorruption(_ error: SQLiteError) -> Bool {
        error.primaryCode == 11 /* CORRUPT */ || error.primaryCode == 26 /* NOTADB */ || error.message.hasPrefix("quick_check: ")
    }

    /// A reset found while writing, to note in the fresh database once it is open.
    private var pendingResetNote: String?

    /// Why and where each database file was moved aside, for diagnostics.
    private(set) var resets: [String] = []

    /// Moves the damaged database (and its log) to `<path>.corrupt-<UTC time>`, counting what it
    /// held if it still can. Returns the reason to report.
    private func quarantineDamagedFile(because error: SQLiteError) -> String {
        moveAside(because: error, suffix: "corrupt", what: "the database was damaged (\(error.message))")
    }

    /// Moves the database (and its log) to `<path>.<suffix>-<UTC time>`, counting what it held if
    /// it still can, and remembers why as the last error. Returns the reason to report.
    private func moveAside(because error: SQLiteError, suffix: String, what: String) -> String {
        dropConnection()
        let lost = Self.countEventsIfReadable(path)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        let aside = path + ".\(suffix)-" + formatter.string(from: Date())
        let files = FileManager.default
        for suffix in ["", "-wal"] where files.fileExists(atPath: path + suffix) {
            try? files.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        try? files.removeItem(atPath: path + "-shm")  // derived from the WAL; rebuilt on open
        var reason = "\(what); moved aside to \((aside as NSString).lastPathComponent)"
        if let lost { reason += "; it held \(lost) events" }
        logger.error("storage: \(reason)")
        resets.append(reason)
        lastError = StorageError(SQLiteError(code: error.code, message: reason))
        return reason
    }

    /// How many events a damaged file still lets us count, if any.
    private static func countEventsIfReadable(_ path: String) -> Int? {
        guard let connection = try? SQLiteConnection(path: path, busyTimeoutMilliseconds: 100),
              let points = try? connection.scalarInt("SELECT count(*) FROM point_events"),
              let spans = try? connection.scalarInt("SELECT count(*) FROM span_events") else { return nil }
        return Int(points + spans)
    }

    private func openFile() throws(SQLiteError) -> Open {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(code: 14, message: "cannot create the directory \(directory): \(error.localizedDescription)")
            }
        }
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
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
        try connection.execute("PRAGMA journal_size_limit = \(min(4 << 20, limits.maxBytes / 8))")
        try connection.execute("PRAGMA wal_autocheckpoint = \(max(16, min(1_000, limits.maxBytes / 8 / 4_096)))")
        try Schema.migrate(connection)
        if cipher != nil {
            // Deleted values (delivered, pruned) are overwritten, not left in the file's slack.
            try connection.execute("PRAGMA secure_delete = ON")
        }
        try AtRestEncryption.prepare(connection, cipher: cipher) { () throws(SQLiteError) in
            try Self.anotherProcessHasItOpen(connection)
        }
        let tables = try EventTableFactory(connection: connection, cipher: cipher)
        let opened = Open(connection: connection, tables: tables,
                          sessions: try SessionTable(connection: connection),
                          outbox: try Outbox(connection: connection, tables: tables, cipher: cipher, logger: logger),
                          pruner: try Pruner(connection: connection, path: path))
        try connection.transaction { () throws(SQLiteError) in try registerProcess(opened) }
        storedEvents = try opened.pruner.storedEvents()
        if let note = pendingResetNote {
            try connection.transaction { () throws(SQLiteError) in
                try opened.outbox.note(kind: "database_reset", detail: note, at: clock.wallMilliseconds())
            }
            pendingResetNote = nil
        }
        open = opened
        return opened
    }

    /// Records this process as having the database open, and closes as abandoned the open spans
    /// of processes that had it open and are gone without closing it (crashed or killed).
    private func registerProcess(_ db: Open) throws(SQLiteError) {
        let me = Int64(getpid())
        let others = try db.connection.prepare("SELECT epoch, pid FROM open_epochs WHERE epoch != \(processClockEpoch)")
            .collect { ($0.int64(at: 0), $0.int64(at: 1)) }
        // A pid that still answers (and is not this process under an older epoch) is another app
        // process sharing the file: its spans are alive.
        let gone = others.filter { epoch, pid in pid == me || kill(pid_t(truncatingIfNeeded: pid), 0) != 0 }.map(\.0)
        abandonedSpans += try db.pruner.abandonSpans(ofEpochs: gone, olderThan: Int64.min)
        if !gone.isEmpty {
            try db.connection.execute("DELETE FROM open_epochs WHERE epoch IN (\(gone.map(String.init).joined(separator: ",")))")
        }
        try db.connection.execute("""
            INSERT INTO open_epochs (epoch, pid, opened_ms) VALUES (\(processClockEpoch), \(me), \(Int64(Date().timeIntervalSince1970 * 1000)))
            ON CONFLICT (epoch) DO NOTHING
            """)
    }

    /// Whether a live process other than this one has registered the database as open.
    static func anotherProcessHasItOpen(_ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        let me = Int64(getpid())
        return try connection.prepare("SELECT pid FROM open_epochs").collect { $0.int64(at: 0) }
            .contains { pid in pid != me && (kill(pid_t(truncatingIfNeeded: pid), 0) == 0 || errno == EPERM) }
    }

    /// Closes the connection for good, as the logger closes: spans still open are not abandoned
    /// at the next start (the app may end them by id then).
    func close() {
        owner.check()
        if let open {
            try? open.connection.execute("DELETE FROM open_epochs WHERE epoch = \(processClockEpoch)")
        }
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
        owner.check()
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
            enforceLimits(db, now: clock.wallMilliseconds(), includingAge: false)
            return statuses
        } catch {
            forgetUncommittedRowIDs()
            if Self.isCorruption(error) {
                // Damaged while open: move it aside now; the next write starts a fresh file.
                _ = quarantineDamagedFile(because: error)
                pendingResetNote = lastError?.message
                return Array(repeating: .failed(.storage(StorageError(error))), count: requests.count)
            }
            if requests.count > 1 && error.isAboutOneRow {
                return requests.map { write(CollectionOfOne($0))[0] }
            }
            lastError = StorageError(error)
            logger.warning("storage: \(requests.count) requests failed: \(error.message)")
            if error.primaryCode != 5 /* SQLITE_BUSY: the connection is fine, just wait */ { dropConnection() }
            return Array(repeating: .failed(.storage(StorageError(error))), count: requests.count)
        }
    }

    /// Runs `body` with the outbox inside one transaction. On failure everything is rolled back
    /// and the error is remembered, as for writes.
    func withOutbox<T>(_ body: (Outbox) throws(SQLiteError) -> T) throws(StorageError) -> T {
        owner.check()
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
            let priority = limits.priorities.isEmpty ? 0 : limits.priority(for: event.draft.name)
            try db.tables.table(for: event.draft.kind).insert(event, sessionRowID: session, priority: priority)
            storedEvents += 1
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

    /// Keeps the limits after a write: rows and bytes (cheap checks). With `includingAge`, also
    /// drops events past the age limit and abandons timed-out spans (a full scan: the timer's job).
    /// A failure here is logged in `lastError` and retried at the next write; nothing recorded is
    /// affected by it.
    func enforceLimits(includingAge: Bool) {
        owner.check()
        guard let db = try? openDatabase() else { return }
        enforceLimits(db, now: clock.wallMilliseconds(), includingAge: includingAge)
    }

    private func enforceLimits(_ db: Open, now: Int64, includingAge: Bool) {
        let limits = self.limits
        do throws(SQLiteError) {
            var overBytes = try db.pruner.bytes().total > Int64(limits.maxBytes)
            if overBytes {
                // Much of the excess may be the log or free pages: give those back before
                // dropping any event.
                try compact(db)
                overBytes = try db.pruner.bytes().total > Int64(limits.maxBytes)
            }
            if !includingAge {
                // Rows: the counter only ever over-estimates; recount before dropping anything.
                guard storedEvents > limits.maxRows || overBytes else { return }
                storedEvents = try db.pruner.storedEvents()
            } else {
                storedEvents = try db.pruner.storedEvents()
                abandonedSpans += try db.connection.transaction { () throws(SQLiteError) -> Int in
                    try db.pruner.abandonSpans(ofEpochs: [], olderThan: now &- limits.spanTimeoutMilliseconds)
                }
            }
            var stored = storedEvents
            let inFlight = inFlightBatches
            let outcome = try db.connection.transaction { () throws(SQLiteError) -> Pruner.Outcome in
                // A batch that failed and waits is only queued data: release it, so the oldest
                // events go first whether or not an upload attempt once picked them.
                try db.outbox.releaseWaitingBatches(except: inFlight)
                return try db.pruner.enforce(limits, ageCutoff: includingAge ? now &- limits.maxAgeMilliseconds : nil,
                                             inFlight: try db.pruner.inFlightEvents(inFlight), storedEvents: &stored)
            }
            storedEvents = stored
            prunedEvents += outcome.total
            if outcome.droppedForBytes > 0 || includingAge { try compact(db) }
        } catch {
            lastError = StorageError(error)
        }
    }

    /// Gives free pages back to the disk and cuts the log down (outside any transaction).
    private func compact(_ db: Open) throws(SQLiteError) {
        try db.connection.execute("PRAGMA incremental_vacuum")
        _ = try? db.connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// What is stored, for diagnostics.
    func storedCounts() throws(SQLiteError) -> (points: Int, spans: Int, openSpans: Int) {
        owner.check()
        let db = try openDatabase()
        return (try db.tables.points.count(), try db.tables.spans.count(), try db.tables.spans.openCount())
    }
}
