import Foundation
import NFLogSupport

/// The storage of one kind of record. ``EventTableFactory`` hands out the right one for a kind.
///
/// Rows move through three states: recorded (no `batch_id`), assigned to an upload batch, and
/// deleted once the collector confirmed that batch. How rows get there is each table's own
/// (events are inserted, aggregates are folded into).
protocol EventTable: AnyObject {
    var kind: RecordKind { get }
    /// How many records of this kind are stored.
    func count() throws(SQLiteError) -> Int

    /// The context and time of the oldest row ready for upload (not in a batch; spans: ended).
    func oldestReady() throws(SQLiteError) -> (contextRowID: Int64, timestamp: Int64)?
    /// The oldest rows ready for upload whose session belongs to this context, oldest first.
    func ready(contextRowID: Int64, limit: Int) throws(SQLiteError) -> [StoredEvent]
    /// How many rows wait for upload: ready, or in an upload batch not yet confirmed.
    func waitingCount() throws(SQLiteError) -> Int
    /// The rows of an upload batch.
    func rows(inBatch batchRowID: Int64) throws(SQLiteError) -> [StoredEvent]
    /// Puts the first `count` rows that ``ready(contextRowID:limit:)`` returns into an upload batch,
    /// in one statement (the same query, in the same transaction, so the same rows).
    func assignReady(contextRowID: Int64, count: Int, toBatch batchRowID: Int64) throws(SQLiteError)
    /// Takes every row out of a batch again (the batch is being split).
    func release(batch batchRowID: Int64) throws(SQLiteError)
    /// Deletes the rows of a batch the collector confirmed. Returns how many.
    func deleteRows(inBatch batchRowID: Int64) throws(SQLiteError) -> Int
    /// Deletes one row (it was quarantined).
    func delete(rowID: Int64) throws(SQLiteError)
}

extension SQLiteStatement {
    /// Binds the columns every event table starts its INSERT with, in this order:
    /// `uuid, session_id, name, type, parameters, <time in ms>`.
    func bindCommonColumns(of event: EventRecord, sessionRowID: Int64, cipher: ParameterCipher?) throws(SQLiteError) {
        try bind(event.id, at: 1)
        try bind(sessionRowID, at: 2)
        try bind(event.draft.name, at: 3)
        try bind(event.draft.type, at: 4)
        try bindParameters(event.draft.parameters, id: event.id, slot: .parameters, cipher: cipher, at: 5)
        try bind(event.draft.wallMilliseconds, at: 6)
    }

    /// Binds parameters JSON as TEXT, or, with a cipher, sealed as a BLOB: plaintext parameters
    /// never reach the file when encryption is configured.
    func bindParameters(_ json: [UInt8]?, id: UUID, slot: ParameterCipher.Slot, cipher: ParameterCipher?, at index: Int32) throws(SQLiteError) {
        guard let cipher, let json else { return try bindText(json, at: index) }
        let sealed: [UInt8]
        do { sealed = try cipher.seal(json, id: id, slot: slot) } catch {
            throw SQLiteError(code: 1, message: "encryption: \(error)")
        }
        try bindBlob(sealed, at: index)
    }

    /// Reads the columns of every table's upload queries, the same layout for every kind (NULL
    /// where a kind has no such column): `id, uuid, session_id, name, type, parameters, <time in
    /// ms>, end_ms, duration_ns, end_parameters, abandoned, transaction_id, parent_span`, an
    /// aggregate's `window_s`, and the `web_origin` of an event web content logged.
    func storedEvent(kind: RecordKind) -> StoredEvent {
        StoredEvent(kind: kind, rowID: int64(at: 0), id: uuid(at: 1), sessionRowID: int64(at: 2),
                    name: text(at: 3) ?? "", type: text(at: 4) ?? "", parameters: blob(at: 5),
                    timestamp: int64(at: 6),
                    end: isNull(at: 7) ? nil : int64(at: 7),
                    durationNanoseconds: isNull(at: 8) ? nil : int64(at: 8),
                    endParameters: blob(at: 9),
                    abandoned: int64(at: 10) != 0,
                    transaction: isNull(at: 11) ? nil : uuid(at: 11),
                    parentSpan: isNull(at: 12) ? nil : UInt64(bitPattern: int64(at: 12)),
                    windowSeconds: kind == .aggregate ? int64(at: 13) : nil,
                    webOrigin: text(at: 14))
    }

    /// Binds an event's transaction, parent span and web origin at `index`…`index + 2` (NULL when none).
    func bindTransaction(of event: EventRecord, at index: Int32) throws(SQLiteError) {
        if let transaction = event.transaction { try bind(transaction, at: index) } else { try bindNull(at: index) }
        if let parent = event.draft.link?.parentSpan { try bind(Int64(bitPattern: parent), at: index + 1) } else { try bindNull(at: index + 1) }
        if let origin = event.draft.link?.webOrigin { try bind(origin, at: index + 2) } else { try bindNull(at: index + 2) }
    }
}

/// The SQL that differs between the event tables, so the upload queries are written once.
struct EventTableQueries {
    let waitingCount: SQLiteStatement
    let oldestReady: SQLiteStatement
    let ready: SQLiteStatement
    let inBatch: SQLiteStatement
    let assign: SQLiteStatement
    let release: SQLiteStatement
    let deleteBatch: SQLiteStatement
    let deleteRow: SQLiteStatement

    /// - Parameters:
    ///   - columns: the columns an upload reads, after `id` (see `storedEvent(kind:)`).
    ///   - readyCondition: what makes a row ready besides having no batch (spans: `end_ms IS NOT NULL`).
    init(connection: SQLiteConnection, table: String, columns: String, time: String, readyCondition: String) throws(SQLiteError) {
        // Held rows (consent pending) are never ready, even if a denial failed to delete them.
        let ready = "e.batch_id IS NULL AND e.held = 0\(readyCondition.isEmpty ? "" : " AND e.\(readyCondition)")"
        // Ready or batched: every row, unless readiness needs more than having no batch. A bare
        // count(*) reads no row's columns (a diagnostics call stays ~1.5 ms at 100,000 rows,
        // where testing batch_id row by row took ~6 ms).
        // Held rows (consent pending) are not waiting for upload: counted through their partial
        // index and taken off, so the bare count(*) stays.
        waitingCount = try connection.prepare(readyCondition.isEmpty
            ? "SELECT (SELECT count(*) FROM \(table)) - (SELECT count(*) FROM \(table) WHERE held = 1)"
            : "SELECT count(*) FROM \(table) e WHERE (e.batch_id IS NOT NULL OR e.\(readyCondition)) AND e.held = 0")
        oldestReady = try connection.prepare("""
            SELECT s.context_id, e.\(time) FROM \(table) e JOIN sessions s ON s.id = e.session_id
            WHERE \(ready) ORDER BY e.id LIMIT 1
            """)
        self.ready = try connection.prepare("""
            SELECT e.id, \(columns) FROM \(table) e JOIN sessions s ON s.id = e.session_id
            WHERE \(ready) AND s.context_id = ? ORDER BY e.id LIMIT ?
            """)
        inBatch = try connection.prepare("SELECT e.id, \(columns) FROM \(table) e WHERE e.batch_id = ? ORDER BY e.id")
        assign = try connection.prepare("""
            UPDATE \(table) SET batch_id = ?1 WHERE id IN (
                SELECT e.id FROM \(table) e JOIN sessions s ON s.id = e.session_id
                WHERE \(ready) AND s.context_id = ?2 ORDER BY e.id LIMIT ?3)
            """)
        release = try connection.prepare("UPDATE \(table) SET batch_id = NULL WHERE batch_id = ?")
        deleteBatch = try connection.prepare("DELETE FROM \(table) WHERE batch_id = ?")
        deleteRow = try connection.prepare("DELETE FROM \(table) WHERE id = ?")
    }
}

/// The upload half of ``EventTable``, shared by both tables through ``EventTableQueries``.
protocol UploadableEventTable: EventTable {
    var queries: EventTableQueries { get }
}

extension UploadableEventTable {
    func oldestReady() throws(SQLiteError) -> (contextRowID: Int64, timestamp: Int64)? {
        let statement = queries.oldestReady
        return try statement.collect { ($0.int64(at: 0), $0.int64(at: 1)) }.first
    }

    func ready(contextRowID: Int64, limit: Int) throws(SQLiteError) -> [StoredEvent] {
        let statement = queries.ready
        try statement.bind(contextRowID, at: 1)
        try statement.bind(Int64(limit), at: 2)
        return try statement.collect { $0.storedEvent(kind: kind) }
    }

    func waitingCount() throws(SQLiteError) -> Int {
        Int(try queries.waitingCount.collect { $0.int64(at: 0) }.first ?? 0)
    }

    func rows(inBatch batchRowID: Int64) throws(SQLiteError) -> [StoredEvent] {
        try queries.inBatch.bind(batchRowID, at: 1)
        return try queries.inBatch.collect { $0.storedEvent(kind: kind) }
    }

    func assignReady(contextRowID: Int64, count: Int, toBatch batchRowID: Int64) throws(SQLiteError) {
        guard count > 0 else { return }
        try queries.assign.bind(batchRowID, at: 1)
        try queries.assign.bind(contextRowID, at: 2)
        try queries.assign.bind(Int64(count), at: 3)
        try queries.assign.run()
    }

    func release(batch batchRowID: Int64) throws(SQLiteError) {
        try queries.release.bind(batchRowID, at: 1)
        try queries.release.run()
    }

    func deleteRows(inBatch batchRowID: Int64) throws(SQLiteError) -> Int {
        try queries.deleteBatch.bind(batchRowID, at: 1)
        try queries.deleteBatch.run()
        return queries.deleteBatch.changes
    }

    func delete(rowID: Int64) throws(SQLiteError) {
        try queries.deleteRow.bind(rowID, at: 1)
        try queries.deleteRow.run()
    }
}
