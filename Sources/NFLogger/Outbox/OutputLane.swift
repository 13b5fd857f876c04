@_spi(NFLogShared) import NFLogSupport

/// One durable output's queue over one event table: which rows are ready for it, which are in
/// its batches, and what settling a batch does.
///
/// The collector at `upload_url` is output 0 and queues with the table's own `batch_id`: `NULL`
/// ready, a batch's id while in it, and `0` once it is done with the row (delivered, or the row
/// was never for it) while another output still owes it. Every other output queues through
/// `deliveries`, one row per record it is owed. A record leaves its table when the collector is
/// done with it and no output owes it: so an event is stored once however many outputs want it.
///
/// With no other output configured (``tracksOthers`` false) the collector's SQL is what it was
/// before outputs existed: not one statement more per row.
final class OutputLane {
    let kind: RecordKind
    let output: Int64
    private let waiting: SQLiteStatement
    private let oldest: SQLiteStatement
    private let readyRows: SQLiteStatement
    private let inBatch: SQLiteStatement
    private let assign: SQLiteStatement
    private let releaseBatch: SQLiteStatement
    private let upTo: SQLiteStatement
    /// Settling a delivered batch, then removing a single row (quarantined for this output), in order.
    private let settleBatch: [SQLiteStatement]
    private let removeRow: [SQLiteStatement]

    init(connection: SQLiteConnection, table: any EventTable, output: Int64, tracksOthers: Bool) throws(SQLiteError) {
        kind = table.kind
        self.output = output
        let (name, columns, time, condition) = (table.tableName, table.uploadColumns, table.timeColumn, table.readyCondition)
        let extra = condition.isEmpty ? "" : " AND e.\(condition)"
        // Held rows (consent pending) are never ready, even if a denial failed to delete them.
        let ready: String
        let from: String
        let order: String
        if output == 0 {
            ready = "e.batch_id IS NULL AND e.held = 0\(extra)"
            from = "\(name) e"
            order = "e.id"
            // Ready or batched, not held, not done. A bare count(*) reads no row's columns (several
            // times cheaper than testing batch_id row by row on a large table): held and done rows
            // are counted through their partial indexes.
            waiting = try connection.prepare(condition.isEmpty
                ? """
                  SELECT (SELECT count(*) FROM \(name)) - (SELECT count(*) FROM \(name) WHERE held = 1)
                       - (SELECT count(*) FROM \(name) WHERE batch_id = 0 AND held = 0)
                  """
                : "SELECT count(*) FROM \(name) e WHERE (e.batch_id > 0 OR (e.batch_id IS NULL AND e.\(condition))) AND e.held = 0")
            // A batch's rows by its recorded range (BatchRange): no index on batch_id to keep.
            let batchRows = BatchRange.rows(of: kind, inBatch: "?1")
            inBatch = try connection.prepare("""
                SELECT e.id, \(columns) FROM \(name) e WHERE \(BatchRange.rows(of: kind, inBatch: "?1", alias: "e.")) ORDER BY e.id
                """)
            // A batch's rows are the first ready rows of its context (see assignReady), so the
            // context's ready rows between its first and last id are exactly they: a range of the
            // table, without a subquery to order and count them.
            assign = try connection.prepare("""
                UPDATE \(name) SET batch_id = ?1 WHERE id BETWEEN ?4 AND ?5 AND batch_id IS NULL AND held = 0\(condition.isEmpty ? "" : " AND \(condition)")
                    AND session_id IN (SELECT id FROM sessions WHERE context_id = ?2)
                """)
            releaseBatch = try connection.prepare("UPDATE \(name) SET batch_id = NULL WHERE \(batchRows)")
            upTo = try connection.prepare("SELECT EXISTS (SELECT 1 FROM \(name) e WHERE e.id <= ?1 AND e.batch_id IS NOT 0\(extra))")
            let owed = "EXISTS (SELECT 1 FROM deliveries d WHERE d.kind = \(kind.code) AND d.row = \(name).id)"
            settleBatch = tracksOthers
                ? [try connection.prepare("UPDATE \(name) SET batch_id = 0 WHERE \(batchRows) AND \(owed)"),
                   try connection.prepare("DELETE FROM \(name) WHERE \(batchRows)")]
                : [try connection.prepare("DELETE FROM \(name) WHERE \(batchRows)")]
            removeRow = tracksOthers
                ? [try connection.prepare("UPDATE \(name) SET batch_id = 0 WHERE id = ?1 AND \(owed)"),
                   try connection.prepare("DELETE FROM \(name) WHERE id = ?1 AND batch_id IS NOT 0")]
                : [try connection.prepare("DELETE FROM \(name) WHERE id = ?1")]
        } else {
            let mine = "d.output = \(output) AND d.kind = \(kind.code)"
            ready = "\(mine) AND d.batch IS NULL AND e.held = 0\(extra)"
            from = "deliveries d JOIN \(name) e ON e.id = d.row"
            order = "d.row"
            waiting = try connection.prepare("""
                SELECT count(*) FROM \(from) WHERE \(mine) AND e.held = 0 AND (d.batch IS NOT NULL\(condition.isEmpty ? " OR 1" : " OR e.\(condition)"))
                """)
            inBatch = try connection.prepare("SELECT e.id, \(columns) FROM \(from) WHERE \(mine) AND d.batch = ? ORDER BY d.row")
            assign = try connection.prepare("""
                UPDATE deliveries SET batch = ?1 WHERE output = \(output) AND kind = \(kind.code) AND row IN (
                    SELECT d.row FROM \(from) JOIN sessions s ON s.id = e.session_id
                    WHERE \(ready) AND s.context_id = ?2 ORDER BY d.row LIMIT ?3)
                """)
            releaseBatch = try connection.prepare("UPDATE deliveries SET batch = NULL WHERE batch = ?1 AND output = \(output) AND kind = \(kind.code)")
            upTo = try connection.prepare("SELECT EXISTS (SELECT 1 FROM \(from) WHERE \(mine) AND d.row <= ?1\(extra))")
            // The rows no one else owes and the collector is done with leave with the delivery.
            let others = "NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.kind = \(kind.code) AND o.row = \(name).id AND o.output <> \(output))"
            settleBatch = [
                try connection.prepare("""
                    DELETE FROM \(name) WHERE batch_id = 0 AND \(others) AND id IN (
                        SELECT row FROM deliveries WHERE batch = ?1 AND output = \(output) AND kind = \(kind.code))
                    """),
                try connection.prepare("DELETE FROM deliveries WHERE batch = ?1 AND output = \(output) AND kind = \(kind.code)"),
            ]
            removeRow = [
                try connection.prepare("DELETE FROM \(name) WHERE id = ?1 AND batch_id = 0 AND \(others)"),
                try connection.prepare("DELETE FROM deliveries WHERE output = \(output) AND kind = \(kind.code) AND row = ?1"),
            ]
        }
        oldest = try connection.prepare("""
            SELECT s.context_id, e.\(time) FROM \(from) JOIN sessions s ON s.id = e.session_id
            WHERE \(ready) ORDER BY \(order) LIMIT 1
            """)
        readyRows = try connection.prepare("""
            SELECT e.id, \(columns) FROM \(from) JOIN sessions s ON s.id = e.session_id
            WHERE \(ready) AND s.context_id = ? ORDER BY \(order) LIMIT ?
            """)
    }

    /// The context and time of the oldest row ready for this output.
    func oldestReady() throws(SQLiteError) -> (contextRowID: Int64, timestamp: Int64)? {
        try oldest.collect { ($0.int64(at: 0), $0.int64(at: 1)) }.first
    }

    /// The oldest rows ready for this output whose session belongs to this context, oldest first.
    func ready(contextRowID: Int64, limit: Int) throws(SQLiteError) -> [StoredEvent] {
        try readyRows.bind(contextRowID, at: 1)
        try readyRows.bind(Int64(limit), at: 2)
        return try readyRows.collect { $0.storedEvent(kind: kind) }
    }

    /// How many rows wait for this output: ready, or in one of its batches not yet confirmed.
    func waitingCount() throws(SQLiteError) -> Int {
        Int(try waiting.collect { $0.int64(at: 0) }.first ?? 0)
    }

    /// Whether a row at or below `rowID` still waits for this output.
    func hasWaiting(upTo rowID: Int64) throws(SQLiteError) -> Bool {
        try upTo.bind(rowID, at: 1)
        return (try upTo.collect { $0.int64(at: 0) }.first ?? 0) != 0
    }

    /// The rows of one of this output's batches.
    func rows(inBatch batchRowID: Int64) throws(SQLiteError) -> [StoredEvent] {
        try inBatch.bind(batchRowID, at: 1)
        return try inBatch.collect { $0.storedEvent(kind: kind) }
    }

    /// Puts the first `count` rows that ``ready(contextRowID:limit:)`` returns, whose ids span
    /// `rows`, into a batch, in one statement in the same transaction; the batch's row records
    /// `rows` already (``BatchRange``). The collector's lane marks
    /// the context's ready rows within `rows` (the first `count` ready rows are all of those);
    /// another output's lane marks the first `count` ready rows again.
    func assignReady(contextRowID: Int64, count: Int, rows: ClosedRange<Int64>, toBatch batchRowID: Int64) throws(SQLiteError) {
        guard count > 0 else { return }
        try assign.bind(batchRowID, at: 1)
        try assign.bind(contextRowID, at: 2)
        if output == 0 {
            try assign.bind(rows.lowerBound, at: 4)
            try assign.bind(rows.upperBound, at: 5)
        } else {
            try assign.bind(Int64(count), at: 3)
        }
        try assign.run()
    }

    /// Takes every row out of a batch again (it is being split, or it waits and may be pruned).
    func release(batch batchRowID: Int64) throws(SQLiteError) {
        try releaseBatch.bind(batchRowID, at: 1)
        try releaseBatch.run()
    }

    /// The output confirmed the batch: its rows are done for it. Returns how many.
    func settle(batch batchRowID: Int64) throws(SQLiteError) -> Int {
        var settled = 0
        for statement in settleBatch {
            try statement.bind(batchRowID, at: 1)
            try statement.run()
            // The collector's UPDATE and DELETE touch disjoint rows; another output's count is its deliveries.
            if output == 0 || statement === settleBatch.last { settled += statement.changes }
        }
        return settled
    }

    /// One row is done for this output (it was set aside in quarantine).
    func remove(rowID: Int64) throws(SQLiteError) {
        for statement in removeRow {
            try statement.bind(rowID, at: 1)
            try statement.run()
        }
    }
}
