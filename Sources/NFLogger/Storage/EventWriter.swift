import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Writes batches of ``StorageRequest``s, one transaction a batch: events into their tables,
/// span ends onto their starts, sessions suspended and resumed. It remembers the row ids of the
/// context and the sessions it has written, so an event costs one insert.
///
/// Used only on the RequestManager's queue (its row-id caches rely on it); each entry point
/// checks it (``QueueOwner``, debug builds).
final class EventWriter {
    /// The standard properties, as stored once in `contexts`.
    private let contextJSON: String
    /// Row ids known to be committed: a cache, cleared whenever a transaction fails.
    private var contextRowID: Int64?
    private var sessionRowIDs: [UUID: Int64] = [:]
    /// The last session looked up and its row id: nearly every event is in the current session,
    /// and comparing the object is cheaper than hashing its UUID.
    private var lastSession: (session: Session, rowID: Int64)?
    /// Counts each event inserted, for the row limit.
    private let limitEnforcer: LimitEnforcer
    private let owner: QueueOwner
    /// The consent the app last set, as far as the requests written so far go (in order with
    /// the events): what an event logged while consent was pending meets when it is written.
    private(set) var consent: Consent
    /// Held events deleted because consent was denied, since the logger started (committed).
    private(set) var consentDeletedEvents = 0
    /// Consent changes whose effect on the held rows is not committed yet, in order: applied
    /// first in the next transaction when theirs failed (a busy or full database). At start, the
    /// consent in force, so rows held by an earlier run follow it (released if granted, deleted
    /// if denied) even if the app never sets it again.
    private var owedConsent: [(Consent, ConsentReceipt?)]
    /// What this transaction's consent changes deleted, made final when it commits.
    private var uncommittedDeletions: [(ConsentReceipt?, Int)] = []
    /// Folds the events a policy's `rules.aggregate` matches, in the same transactions.
    let aggregator: Aggregator
    /// Point events applied but not yet inserted: consecutive ones go in multi-row inserts
    /// (`PointEventTable.insert(_:)` of rows), written before any
    /// other request is applied and before the transaction ends, so the order of effects is
    /// the requests' order.
    private var pointRows: [PointEventTable.Row] = []

    init(owner: QueueOwner, properties: StandardProperties, limitEnforcer: LimitEnforcer, consent: Consent) {
        self.owner = owner
        self.consent = consent
        self.owedConsent = [(consent, nil)]
        self.contextJSON = properties.canonicalJSON()
        self.limitEnforcer = limitEnforcer
        self.aggregator = Aggregator(owner: owner, limitEnforcer: limitEnforcer)
    }

    /// Applies `requests` in one transaction and returns one status per request, in order: each
    /// request's own outcome (`.recorded`, or a `.failed` that changed nothing, such as ending an
    /// unknown span). Folded events' aggregates are written, and aggregates whose windows ended
    /// by `now` closed, in the same transaction. Throws, having written nothing, when the
    /// transaction fails.
    func write(_ requests: some Collection<StorageRequest>, to db: OpenDatabase,
               limits: StorageLimits, router: OutputRouter? = nil, now: Int64) throws(SQLiteError) -> [LogStatus] {
        owner.check()
        var statuses: [LogStatus] = []
        statuses.reserveCapacity(requests.count)
        uncommittedDeletions = []
        let owed = owedConsent
        do {
            try db.connection.transaction { () throws(SQLiteError) in
                try aggregator.beginTransaction(db)
                for (consent, receipt) in owed { uncommittedDeletions.append((receipt, try reconcile(consent, db))) }
                pointRows.removeAll(keepingCapacity: true)
                for request in requests {
                    if !pointRows.isEmpty && !request.isEvent { try insertPointRows(db) }
                    statuses.append(try apply(request, db, limits, router, now: now))
                    if pointRows.count >= PointEventTable.rowsPerInsert { try insertPointRows(db) }
                }
                try insertPointRows(db)
                try aggregator.persist(db)
                try aggregator.closeDue(now: now, db: db)
            }
        } catch {
            // Nothing committed (the failure may have come before any request was applied): this
            // batch's consent changes are owed too, after the older ones, and the consent for
            // what is written next is the last one the app set.
            for request in requests {
                if case .consent(let consent, let receipt) = request {
                    owedConsent.append((consent, receipt))
                    self.consent = consent
                }
            }
            uncommittedDeletions = []
            pointRows.removeAll(keepingCapacity: true)
            throw error
        }
        // Committed: the consent changes took effect, and the folds.
        aggregator.committed()
        owedConsent = []
        var deleted = 0
        for (receipt, count) in uncommittedDeletions {
            receipt?.deletedEvents += count
            deleted += count
        }
        uncommittedDeletions = []
        if deleted > 0 {
            consentDeletedEvents += deleted
            try? limitEnforcer.recount(db)  // its estimate of the stored rows; a failure only delays pruning
        }
        return statuses
    }

    /// Whether a consent change still has to be applied to the held rows.
    var owesConsent: Bool { !owedConsent.isEmpty }

    /// Row ids learned inside a failed transaction were rolled back with it, and those of a
    /// dropped connection may belong to a file moved aside.
    func forgetUncommittedRowIDs() {
        owner.check()
        contextRowID = nil
        sessionRowIDs = [:]
        lastSession = nil
        aggregator.forget()
    }

    private func apply(_ request: consuming StorageRequest, _ db: OpenDatabase, _ limits: StorageLimits, _ router: OutputRouter?,
                       now: Int64) throws(SQLiteError) -> LogStatus {
        switch consume request {  // its payload moves into the row, not copied
        case .event(var event):
            // With outputs routed by pattern, an event no enabled durable output takes is not stored.
            let route = router?.route(for: event.draft.name)
            if route?.isEmpty == true { return .filtered(.noOutput) }
            // Logged while consent was pending: held if it still is, released if it was granted
            // meanwhile, and never written if it was denied meanwhile.
            if event.draft.loggedWhilePending {
                if consent == .denied { return .filtered(.consentDenied) }
                event.held = consent == .pending
            }
            let session = try sessionRowID(event.session, db)
            let priority = limits.priorities.isEmpty ? 0 : limits.priority(for: event.draft.name)
            switch event.draft.kind {
            case .point where route == nil:
                // No delivery rows to write with it, so it may wait for the rows after it. The
                // record moves into the row (`consume`): a copy retained each of its references.
                let id = event.id
                pointRows.append(PointEventTable.Row(event: consume event, sessionRowID: session, priority: priority))
                limitEnforcer.countInserted()
                return .recorded(id)
            case .point:
                try insertPointRows(db)
                try db.tables.points.insert(event, sessionRowID: session, priority: priority)
            case .span: try db.tables.spans.insert(event, sessionRowID: session, priority: priority)
            }
            if let route {
                try db.deliveries.route(kind: RecordKind(event.draft.kind), row: db.connection.lastInsertRowID,
                                        collector: route.collector, outputs: route.outputs)
            }
            limitEnforcer.countInserted()
            return .recorded(event.id)
        case .fold(let fold, let session):
            // Consent as for an event: a held event folds into a held aggregate of its own.
            if fold.loggedWhilePending && consent == .denied { return .filtered(.consentDenied) }
            let route = router?.route(for: fold.name)
            if route?.isEmpty == true { return .filtered(.noOutput) }
            let held = fold.loggedWhilePending && consent == .pending
            let sessionRowID = try sessionRowID(session, db)
            let priority = limits.priorities.isEmpty ? 0 : limits.priority(for: fold.name)
            return .recorded(try aggregator.fold(fold, held: held, sessionRowID: sessionRowID, priority: priority, route: route,
                                                 now: now, db: db))
        case .endSpan(let end):
            // An end logged while pending holds its span (start included) until consent is given.
            if end.loggedWhilePending && consent == .denied { return .filtered(.consentDenied) }
            // A span a rule matches is folded when it ends (its start was stored, as evidence
            // should the app crash before the end).
            if !aggregator.rules.isEmpty, case .success(let span) = try db.tables.spans.find(end),
               let rule = aggregator.rules.rule(for: span.name) {
                return try foldSpan(span, end, rule, db, limits, router, now: now)
            }
            switch try db.tables.spans.end(end, held: end.loggedWhilePending && consent == .pending) {
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
        case .consent(let consent, let receipt):
            self.consent = consent
            uncommittedDeletions.append((receipt, try reconcile(consent, db)))
            return .disabled  // not a logging call: no status is delivered
        }
    }

    /// Inserts the point events waiting in ``pointRows``, in their order.
    private func insertPointRows(_ db: OpenDatabase) throws(SQLiteError) {
        guard !pointRows.isEmpty else { return }
        try db.tables.points.insert(pointRows[...])
        pointRows.removeAll(keepingCapacity: true)
    }

    /// Folds an ended span: its duration (`duration_ms`) and the numbers of its start's and end's
    /// parameters (the end's win on a shared key), then deletes its row. Start parameters that no
    /// longer open (a file altered, another key) are left out; the duration still folds.
    private func foldSpan(_ span: SpanEventTable.OpenSpan, _ end: SpanEnd, _ rule: AggregateRule, _ db: OpenDatabase,
                          _ limits: StorageLimits, _ router: OutputRouter?, now: Int64) throws(SQLiteError) -> LogStatus {
        var parameters: LogParameters = [:]
        let start = try? db.tables.spans.openParameters(span.parameters, id: end.id, slot: .parameters)
        for json in [start ?? nil, end.parameters] {
            guard let json, let object = (try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any],
                  let decoded = try? LogParameters(jsonObject: object) else { continue }
            parameters.merge(decoded) { _, new in new }
        }
        let fold: Fold
        do {
            fold = try Fold(name: span.name, type: span.type, wallMilliseconds: span.startMilliseconds,
                            loggedWhilePending: end.loggedWhilePending, parameters: parameters, rule: rule,
                            durationMilliseconds: Double(span.duration / 1_000) / 1_000)
        } catch {
            return .failed(error)
        }
        let held = span.held || (end.loggedWhilePending && consent == .pending)
        let priority = limits.priorities.isEmpty ? 0 : limits.priority(for: span.name)
        // The span was stored for the outputs that take its name; its aggregate goes to those that take that.
        let id = try aggregator.fold(fold, held: held, sessionRowID: span.sessionRowID, priority: priority,
                                     route: router?.route(for: span.name), now: now, db: db)
        try db.connection.execute("DELETE FROM span_events WHERE id = \(span.rowID)")
        try db.deliveries.forget(kind: .span, row: span.rowID)
        return .recorded(id)
    }

    /// Brings the held rows into line with a consent: granting releases them for upload, denying
    /// deletes them. Idempotent. Returns how many were deleted.
    private func reconcile(_ consent: Consent, _ db: OpenDatabase) throws(SQLiteError) -> Int {
        switch consent {
        case .pending:
            return 0
        case .granted:
            // The aggregator's cache knows which rows are held: written out and read again.
            try aggregator.reload(db)
            try db.connection.execute("UPDATE point_events SET held = 0 WHERE held = 1")
            try db.connection.execute("UPDATE span_events SET held = 0 WHERE held = 1")
            try db.connection.execute("UPDATE aggregate_events SET held = 0 WHERE held = 1")
            return 0
        case .denied:
            try aggregator.reload(db)
            for table in db.tables.all {
                try db.connection.execute("""
                    DELETE FROM deliveries WHERE kind = \(table.kind.code) AND row IN (SELECT id FROM \(table.tableName) WHERE held = 1)
                    """)
            }
            try db.connection.execute("DELETE FROM point_events WHERE held = 1")
            var deleted = Int(db.connection.changes)
            try db.connection.execute("DELETE FROM span_events WHERE held = 1")
            deleted += Int(db.connection.changes)
            // An aggregate stands for every event folded into it.
            deleted += Int(try db.connection.scalarInt("SELECT coalesce(sum(count), 0) FROM aggregate_events WHERE held = 1"))
            try db.connection.execute("DELETE FROM aggregate_events WHERE held = 1")
            return deleted
        }
    }

    private func sessionRowID(_ session: Session, _ db: OpenDatabase) throws(SQLiteError) -> Int64 {
        if let lastSession, lastSession.session === session { return lastSession.rowID }
        if let known = sessionRowIDs[session.id] {
            lastSession = (session, known)
            return known
        }
        let context: Int64
        if let contextRowID { context = contextRowID } else {
            context = try db.sessions.contextRowID(properties: contextJSON)
            contextRowID = context
        }
        let rowID = try db.sessions.sessionRowID(session, contextRowID: context)
        sessionRowIDs[session.id] = rowID
        lastSession = (session, rowID)
        return rowID
    }
}
