@_spi(NFLogShared) import NFLogSupport

/// Decides when the Pruner runs and keeps its totals: a cheap check of rows and bytes after each
/// write, a full pass (age, timed-out spans) on the maintenance timer, space given back to the
/// disk, and a count of the events stored so the row limit costs no query per write.
///
/// Used only on the RequestManager's queue, with the database the DatabaseManager lends it; each
/// entry point checks it (``QueueOwner``, debug builds).
final class LimitEnforcer {
    /// Events stored, as far as this process knows: exact after open, then counted up on inserts
    /// and only ever over-estimated (deliveries elsewhere are not subtracted), so it is recounted
    /// exactly before anything is pruned.
    private var storedEvents = 0
    /// Totals since the logger started, for diagnostics.
    private(set) var prunedEvents = 0
    /// What was pruned before each output had it, by output id.
    private(set) var prunedByOutput: [String: Int] = [:]
    private(set) var abandonedSpans = 0
    private let owner: QueueOwner

    init(owner: QueueOwner) {
        self.owner = owner
    }

    /// Whether any event is stored, as far as this process knows (an over-estimate, as above).
    var hasStoredEvents: Bool { storedEvents > 0 }

    /// Counts the events in a database just opened.
    func recount(_ db: OpenDatabase) throws(SQLiteError) {
        owner.check()
        storedEvents = try db.pruner.storedEvents()
    }

    /// One event more in the tables (the transaction may still roll back: an over-estimate).
    func countInserted() {
        owner.check()
        storedEvents += 1
    }

    /// Closes as abandoned the open spans of processes gone without closing the logger.
    func abandonSpans(ofDeparted epochs: [Int64], in db: OpenDatabase) throws(SQLiteError) {
        owner.check()
        abandonedSpans += try db.pruner.abandonSpans(ofEpochs: epochs, olderThan: Int64.min)
    }

    /// Keeps `limits` after a write: rows and bytes (cheap checks). With `includingAge`, also
    /// drops events past the age limit and abandons timed-out spans (a full scan: the timer's
    /// job). Never touches the rows of a formed upload batch, sent or waiting to be sent again.
    func enforce(_ limits: StorageLimits, on db: OpenDatabase, now: Int64, includingAge: Bool) throws(SQLiteError) {
        owner.check()
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
        let outcome = try db.connection.transaction { () throws(SQLiteError) -> Pruner.Outcome in
            // A formed batch is never released to be pruned, even one that failed and waits: its
            // answer may have been lost after the collector stored it, and the collector counts
            // what a batch carries once per batch id. Its rows go only when an answer settles it.
            try db.pruner.enforce(limits, ageCutoff: includingAge ? now &- limits.maxAgeMilliseconds : nil,
                                  inBatches: try db.pruner.eventsInBatches(), storedEvents: &stored)
        }
        storedEvents = stored
        prunedEvents += outcome.total
        prunedByOutput.merge(outcome.byOutput, uniquingKeysWith: +)
        if outcome.droppedForBytes > 0 || includingAge { try compact(db) }
    }

    /// Gives free pages back to the disk and cuts the log down (outside any transaction).
    private func compact(_ db: OpenDatabase) throws(SQLiteError) {
        try db.connection.execute("PRAGMA incremental_vacuum")
        _ = try? db.connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
