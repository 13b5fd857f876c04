import Foundation
import NFLogSupport

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
    /// Counts each event inserted, for the row limit.
    private let limitEnforcer: LimitEnforcer
    private let owner: QueueOwner
    /// The consent in force for what is written now: set by the consent requests, in order
    /// with the events, so an event is held if and only if consent was pending when it was logged.
    private(set) var consent: Consent
    /// Held events deleted because consent was denied, since the logger started.
    private(set) var consentDeletedEvents = 0

    init(owner: QueueOwner, properties: StandardProperties, limitEnforcer: LimitEnforcer, consent: Consent) {
        self.owner = owner
        self.consent = consent
        self.contextJSON = properties.canonicalJSON()
        self.limitEnforcer = limitEnforcer
    }

    /// Applies `requests` in one transaction and returns one status per request, in order: each
    /// request's own outcome (`.recorded`, or a `.failed` that changed nothing, such as ending an
    /// unknown span). Throws, having written nothing, when the transaction fails.
    func write(_ requests: some Collection<StorageRequest>, to db: OpenDatabase,
               limits: StorageLimits) throws(SQLiteError) -> [LogStatus] {
        owner.check()
        var statuses: [LogStatus] = []
        statuses.reserveCapacity(requests.count)
        try db.connection.transaction { () throws(SQLiteError) in
            for request in requests {
                statuses.append(try apply(request, db, limits))
            }
        }
        return statuses
    }

    /// Row ids learned inside a failed transaction were rolled back with it, and those of a
    /// dropped connection may belong to a file moved aside.
    func forgetUncommittedRowIDs() {
        owner.check()
        contextRowID = nil
        sessionRowIDs = [:]
    }

    private func apply(_ request: StorageRequest, _ db: OpenDatabase, _ limits: StorageLimits) throws(SQLiteError) -> LogStatus {
        switch request {
        case .event(var event):
            event.held = consent == .pending
            let session = try sessionRowID(event.session, db)
            let priority = limits.priorities.isEmpty ? 0 : limits.priority(for: event.draft.name)
            try db.tables.table(for: event.draft.kind).insert(event, sessionRowID: session, priority: priority)
            limitEnforcer.countInserted()
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
        case .consent(let consent, let receipt):
            receipt.deletedEvents = try apply(consent, db)
            return .disabled  // not a logging call: no status is delivered
        }
    }

    /// Granting releases the held events for upload; denying deletes them. Returns how many
    /// were deleted.
    private func apply(_ consent: Consent, _ db: OpenDatabase) throws(SQLiteError) -> Int {
        self.consent = consent
        switch consent {
        case .pending:
            return 0
        case .granted:
            try db.connection.execute("UPDATE point_events SET held = 0 WHERE held = 1")
            try db.connection.execute("UPDATE span_events SET held = 0 WHERE held = 1")
            return 0
        case .denied:
            try db.connection.execute("DELETE FROM point_events WHERE held = 1")
            var deleted = Int(db.connection.changes)
            try db.connection.execute("DELETE FROM span_events WHERE held = 1")
            deleted += Int(db.connection.changes)
            consentDeletedEvents += deleted
            if deleted > 0 { try limitEnforcer.recount(db) }  // its estimate of the stored rows
            return deleted
        }
    }

    private func sessionRowID(_ session: Session, _ db: OpenDatabase) throws(SQLiteError) -> Int64 {
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
}
