import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// The one owner of the SQLite connection: opens the ``DatabaseFile`` when it is needed (moving
/// it aside when it is damaged or sealed with another key), runs every use of it in one
/// transaction, and decides what a failure means for the connection. The uses live beside it:
/// the ``EventWriter`` writes batches of ``StorageRequest``s, the ``Outbox`` forms and settles
/// upload batches, the ``LimitEnforcer`` keeps the limits.
///
/// Used only on the RequestManager's serial queue, which is what makes its mutable state safe;
/// each entry point checks it (``QueueOwner``, debug builds).
final class DatabaseManager {
    private let file: DatabaseFile
    var path: String { file.path }

    private var open: OpenDatabase?
    private(set) var lastError: StorageError?
    /// Set by ``close()``: a closed manager never reopens the file.
    private var isClosed = false
    /// The limits the Pruner enforces (configuration, then policy).
    var limits: StorageLimits
    /// The durable outputs configured.
    let outputs: DurableOutputSet
    /// The outputs the policy switched off (`outputs.disabled`): they keep nothing new.
    var disabledOutputs: Set<String> = [] {
        didSet { if disabledOutputs != oldValue { router = outputs.router(numbers: open?.outputNumbers ?? [:], disabled: disabledOutputs) } }
    }
    /// Which outputs take each event; `nil` while every event simply goes to the collector.
    private(set) var router: OutputRouter?
    private let writer: EventWriter
    private let limitEnforcer: LimitEnforcer
    /// Totals since this manager started, for diagnostics.
    var prunedEvents: Int { limitEnforcer.prunedEvents }
    /// What was pruned before each output had it, by output id, since the logger started.
    var prunedByOutput: [String: Int] { limitEnforcer.prunedByOutput }
    /// Events held while consent was pending and deleted when it was denied, since the logger started.
    var consentDeletedEvents: Int { writer.consentDeletedEvents }
    /// A consent change has yet to reach the held rows (its transaction failed).
    var owesConsent: Bool { writer.owesConsent }

    /// Whether the periodic pass has anything to do: events stored (as far as the last count
    /// and the inserts since go), or a consent change owed to the held rows.
    var needsMaintenance: Bool { owesConsent || limitEnforcer.hasStoredEvents }

    /// Statements run on the open connection since it opened (none when closed), for the idle test.
    var statementsRun: Int {
        owner.check()
        return open?.connection.statementsRun ?? 0
    }
    var abandonedSpans: Int { limitEnforcer.abandonedSpans }
    /// A reset found while writing, to note in the fresh database once it is open.
    private var pendingResetNote: String?
    /// Why and where each database file was moved aside, for diagnostics.
    private(set) var resets: [String] = []

    /// The logger's clock: events are stamped and aged by the same one.
    private let clock: any EventClock
    /// The SDK's own log: what went wrong with the file, never what events hold.
    private let logger: Logger
    /// The RequestManager's queue: every entry point checks it is called there (debug builds).
    private let owner: QueueOwner

    init(owner: QueueOwner, path: String, busyTimeoutMilliseconds: Int32, properties: StandardProperties, limits: StorageLimits,
         consent: Consent = .granted, cipher: ParameterCipher? = nil, outputs: DurableOutputSet = .collectorOnly,
         clock: any EventClock = SystemEventClock(),
         logger: Logger = Logger(label: "nflogger", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.owner = owner
        self.file = DatabaseFile(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, cipher: cipher)
        self.logger = logger
        self.limits = limits
        self.outputs = outputs
        self.router = outputs.router(numbers: [:], disabled: [])
        self.clock = clock
        let limitEnforcer = LimitEnforcer(owner: owner)
        self.limitEnforcer = limitEnforcer
        self.writer = EventWriter(owner: owner, properties: properties, limitEnforcer: limitEnforcer, consent: consent)
    }

    // MARK: Opening and closing

    /// Opens the database if it is not open. Failing is not final: the next call tries again,
    /// so logging resumes by itself once the cause (a full disk, a locked file) goes away.
    @discardableResult
    func openIfNeeded() throws(SQLiteError) -> SQLiteConnection {
        owner.check()
        return try openDatabase().connection
    }

    private func openDatabase() throws(SQLiteError) -> OpenDatabase {
        if let open { return open }
        if isClosed { throw SQLiteError(code: 21, message: "the database was closed with the logger") }
        do {
            return try openFile()
        } catch where AtRestEncryption.isKeyMismatch(error) {
            // Encrypted with another key: its events cannot be read or sent, and must not be mixed
            // with new ones under this key. Moved aside, never deleted, so the right key can still
            // recover them; but not from under another process that is using it.
            if let connection = try? file.connect(),
               (try? LiveProcessRegistry(connection: connection).anotherProcessHasItOpen()) != false {
                throw SQLiteError(code: 5, message: "\(error.message), and another process has it open; it is left as it is")
            }
            let reset = moveAside(because: error, suffix: "undecryptable",
                                  what: "the database cannot be opened with the configured key (\(error.message))")
            return try reopen(noting: reset)
        } catch where DatabaseFile.isCorruption(error) {
            // A damaged file is moved aside, never deleted, and a fresh database takes its place.
            return try reopen(noting: moveDamagedFileAside(because: error))
        }
    }

    /// Opens the fresh database that takes the place of a file moved aside, and notes the reset.
    private func reopen(noting reset: String) throws(SQLiteError) -> OpenDatabase {
        let opened = try openFile()
        try note(reset: reset, in: opened)
        return opened
    }

    private func openFile() throws(SQLiteError) -> OpenDatabase {
        let connection = try file.open(maxBytes: limits.maxBytes)
        let opened = try OpenDatabase(connection: connection, path: file.path, cipher: file.cipher, outputs: outputs, logger: logger)
        router = outputs.router(numbers: opened.outputNumbers, disabled: disabledOutputs)
        try connection.transaction { () throws(SQLiteError) in
            let registry = LiveProcessRegistry(connection: connection)
            let departed = try registry.departedEpochs()
            try limitEnforcer.abandonSpans(ofDeparted: departed, in: opened)
            try registry.register(forgetting: departed)
        }
        try limitEnforcer.recount(opened)
        if let note = pendingResetNote {
            try self.note(reset: note, in: opened)
            pendingResetNote = nil
        }
        open = opened
        return opened
    }

    /// Notes a database reset for the collector, sent with the next batch.
    private func note(reset: String, in db: OpenDatabase) throws(SQLiteError) {
        try db.connection.transaction { () throws(SQLiteError) in
            try db.diagnostics.note(kind: DiagnosticRecords.databaseResetKind, detail: reset, at: clock.wallMilliseconds())
        }
    }

    /// Moves the damaged database aside (`<path>.corrupt-<UTC time>`). Returns the reason to report.
    private func moveDamagedFileAside(because error: SQLiteError) -> String {
        moveAside(because: error, suffix: "corrupt", what: "the database was damaged (\(error.message))")
    }

    /// Closes the connection and moves the file aside, remembering why as a reset and as the last
    /// error. Returns the reason to report.
    private func moveAside(because error: SQLiteError, suffix: String, what: String) -> String {
        dropConnection()
        let reason = file.moveAside(suffix: suffix, what: what)
        logger.error("storage: \(reason)")
        resets.append(reason)
        lastError = StorageError(SQLiteError(code: error.code, message: reason))
        return reason
    }

    /// Closes the connection for good, as the logger closes: spans still open are not abandoned
    /// at the next start (the app may end them by id then).
    func close() {
        owner.check()
        if let open {
            try? LiveProcessRegistry(connection: open.connection).unregister()
        }
        isClosed = true
        dropConnection()
    }

    /// Drops the connection after a failure; the next request reopens the file.
    private func dropConnection() {
        open = nil
        writer.forgetUncommittedRowIDs()
    }

    // MARK: Uses, one transaction each

    /// Applies `requests` in one transaction and returns one status per request, in order.
    ///
    /// Either the whole batch commits, and each request gets its own outcome, or nothing does.
    /// Then, if SQLite refused one row (a constraint, a value too big), each request is retried in
    /// a transaction of its own so the others are not failed with it; if the database as a whole
    /// failed (full, read-only, busy, damaged), every request gets that storage error.
    func write(_ requests: some Collection<StorageRequest>) -> [LogStatus] {
        owner.check()
        do throws(SQLiteError) {
            let db = try openDatabase()
            let statuses = try writer.write(requests, to: db, limits: limits, router: router, now: clock.wallMilliseconds())
            lastError = nil
            enforceLimits(db, now: clock.wallMilliseconds(), includingAge: false)
            return statuses
        } catch {
            writer.forgetUncommittedRowIDs()
            if DatabaseFile.isCorruption(error) {
                // Damaged while open: move it aside now; the next write starts a fresh file.
                _ = moveDamagedFileAside(because: error)
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

    // MARK: Aggregates

    /// The policy's `rules.aggregate` in force.
    var aggregateRules: [AggregateRule] {
        get { writer.aggregator.rules }
        set { writer.aggregator.rules = newValue }
    }

    /// Events folded into an overflow series since the logger started, for diagnostics.
    var aggregateOverflowEvents: Int { writer.aggregator.overflowEvents }

    /// Closes the aggregates whose windows have ended, and with `early` (a flush, a suspend, a
    /// close) every one open for at least a second. A failure is remembered in `lastError` and
    /// changes nothing: the windows close at the next write or the next call.
    func closeAggregates(early: Bool) {
        owner.check()
        guard let db = try? openDatabase() else { return }
        let now = clock.wallMilliseconds()
        let aggregator = writer.aggregator
        do throws(SQLiteError) {
            try db.connection.transaction { () throws(SQLiteError) in
                try aggregator.beginTransaction(db)
                if early { try aggregator.closeEarly(now: now, db: db) } else { try aggregator.closeDue(now: now, db: db) }
            }
            aggregator.committed()
        } catch {
            aggregator.forget()
            lastError = StorageError(error)
        }
    }

    /// Aggregates closed since the last call: ready for upload.
    func takeClosedAggregates() -> Int { writer.aggregator.takeClosed() }

    /// When the next open aggregate closes by time, if this process knows of one.
    var nextAggregateClose: Int64? { writer.aggregator.nextWindowEnd }

    /// Runs `body` with an output's outbox (the collector's unless `output` names another) inside
    /// one transaction. On failure everything is rolled back and the error is remembered, as for
    /// writes.
    func withOutbox<T>(_ output: String = Configuration.collectorOutputID,
                       _ body: (Outbox) throws(SQLiteError) -> T) throws(StorageError) -> T {
        owner.check()
        do throws(SQLiteError) {
            let db = try openDatabase()
            if let outbox = db.outboxes[output] { return try db.connection.transaction { () throws(SQLiteError) -> T in try body(outbox) } }
        } catch {
            writer.forgetUncommittedRowIDs()
            lastError = StorageError(error)
            if error.primaryCode != 5 /* SQLITE_BUSY */ { dropConnection() }
            throw StorageError(error)
        }
        // Every configured output has one from the open on: this is not the file's fault.
        throw StorageError(SQLiteError(code: 1, message: "no durable output \(output) is configured"))
    }

    /// Keeps the limits (see ``LimitEnforcer/enforce(_:on:now:includingAge:)``). A
    /// failure here is logged in `lastError` and retried at the next write; nothing recorded is
    /// affected by it.
    func enforceLimits(includingAge: Bool) {
        owner.check()
        guard let db = try? openDatabase() else { return }
        enforceLimits(db, now: clock.wallMilliseconds(), includingAge: includingAge)
    }

    private func enforceLimits(_ db: OpenDatabase, now: Int64, includingAge: Bool) {
        do throws(SQLiteError) {
            try limitEnforcer.enforce(limits, on: db, now: now, includingAge: includingAge)
        } catch {
            lastError = StorageError(error)
        }
    }

    /// What is stored, for diagnostics.
    func storedCounts() throws(SQLiteError) -> (points: Int, spans: Int, openSpans: Int, aggregates: Int, aggregatedEvents: Int) {
        owner.check()
        let db = try openDatabase()
        return (try db.tables.points.count(), try db.tables.spans.count(), try db.tables.spans.openCount(),
                try db.tables.aggregates.count(), try db.tables.aggregates.foldedEvents())
    }
}
