import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// Forms one durable output's batches from the event tables (through its ``OutputLane``s) and
/// settles them: delivered (done for this output), split (release the rows), or refused
/// (quarantine the event). The collector's batches carry the waiting ``DiagnosticRecords``; the
/// Uploader reaches the ``EventQuarantine`` and the output's ``UploadHold`` through it too. Every
/// method runs inside the caller's transaction on the RequestManager's queue
/// (``DatabaseManager/withOutbox(_:_:)``).
final class Outbox {
    private let tables: EventTableFactory
    /// This output's queue over each table, in the order a batch lists them.
    private let lanes: [OutputLane]
    /// 0 for the collector at `upload_url`, which alone carries the diagnostics.
    let output: Int64
    /// The output's id, kept with what it quarantines.
    private let outputID: String
    private let pendingBatch: SQLiteStatement
    private let insertBatch: SQLiteStatement
    private let deleteBatch: SQLiteStatement
    private let countAttempt: SQLiteStatement
    private let session: SQLiteStatement
    private let context: SQLiteStatement
    private let latestContext: SQLiteStatement
    private let maxPointID: SQLiteStatement
    private let maxSpanID: SQLiteStatement
    private let maxAggregateID: SQLiteStatement
    private let batchShape: SQLiteStatement
    private let diagnostics: DiagnosticRecords
    private let quarantine: EventQuarantine
    private let hold: UploadHold
    /// Opens sealed parameters to build an upload.
    private let cipher: ParameterCipher?

    init(connection: SQLiteConnection, tables: EventTableFactory, diagnostics: DiagnosticRecords, cipher: ParameterCipher?,
         logger: Logger, output: Int64 = 0, outputID: String = Configuration.collectorOutputID, tracksOthers: Bool = false) throws(SQLiteError) {
        self.tables = tables
        self.output = output
        self.outputID = outputID
        lanes = try tables.all.map { (table) throws(SQLiteError) in
            try OutputLane(connection: connection, table: table, output: output, tracksOthers: tracksOthers)
        }
        self.diagnostics = diagnostics
        self.cipher = cipher
        quarantine = try EventQuarantine(connection: connection, tables: tables, cipher: cipher, logger: logger)
        hold = try UploadHold(connection: connection, output: output)
        pendingBatch = try connection.prepare("SELECT id, uuid, context_id, diagnostics FROM upload_batches WHERE output = \(output) ORDER BY id")
        latestContext = try connection.prepare("SELECT id FROM contexts ORDER BY id DESC LIMIT 1")
        // With the first and last row id of each table the batch holds (BatchRange).
        let rangeColumns = RecordKind.allCases.flatMap { [BatchRange.columns($0).first, BatchRange.columns($0).last] }
        insertBatch = try connection.prepare("""
            INSERT INTO upload_batches (uuid, context_id, created_ms, output, \(rangeColumns.joined(separator: ", ")))
            VALUES (?, ?, ?, \(output), \(Array(repeating: "?", count: rangeColumns.count).joined(separator: ", "))) RETURNING id
            """)
        deleteBatch = try connection.prepare("DELETE FROM upload_batches WHERE id = ?")
        countAttempt = try connection.prepare("UPDATE upload_batches SET attempts = attempts + 1 WHERE id = ?")
        session = try connection.prepare("SELECT uuid, started_ms, ended_ms FROM sessions WHERE id = ?")
        context = try connection.prepare("SELECT properties FROM contexts WHERE id = ?")
        maxPointID = try connection.prepare("SELECT coalesce(max(id), 0) FROM point_events")
        maxSpanID = try connection.prepare("SELECT coalesce(max(id), 0) FROM span_events")
        maxAggregateID = try connection.prepare("SELECT coalesce(max(id), 0) FROM aggregate_events WHERE end_ms IS NOT NULL")
        let counts = tables.all.map { "(SELECT count(*) FROM \($0.tableName) WHERE \(BatchRange.rows(of: $0.kind, inBatch: "?1")))" }
        batchShape = try connection.prepare(output == 0
            ? "SELECT uuid, \(counts.joined(separator: " + ")) FROM upload_batches WHERE id = ?1"
            : "SELECT uuid, (SELECT count(*) FROM deliveries WHERE batch = ?1) FROM upload_batches WHERE id = ?1")
    }

    /// The newest rows stored now; a flush waits for everything up to them.
    struct Watermark: Sendable {
        let point: Int64
        let span: Int64
        /// The newest closed aggregate (open ones are not ready to go).
        let aggregate: Int64
    }

    func watermark() throws(SQLiteError) -> Watermark {
        Watermark(point: try maxPointID.collect { $0.int64(at: 0) }.first ?? 0,
                  span: try maxSpanID.collect { $0.int64(at: 0) }.first ?? 0,
                  aggregate: try maxAggregateID.collect { $0.int64(at: 0) }.first ?? 0)
    }

    /// Whether any event at or below the watermark still waits for this output, ready or in a
    /// batch. EXISTS, not count(*): the uploader asks after every batch, and a count walks every
    /// row below the watermark (quadratic over a large backlog, found by the benchmark).
    func hasWaiting(upTo watermark: Watermark) throws(SQLiteError) -> Bool {
        for lane in lanes {
            let limit = switch lane.kind {
            case .point: watermark.point
            case .span: watermark.span
            case .aggregate: watermark.aggregate
            }
            if try lane.hasWaiting(upTo: limit) { return true }
        }
        return false
    }

    /// Whether `batch` is still unfinished with all its events: no prune, split or database reset
    /// touched it since it was formed. Two index lookups, so a retry can reuse what it sent.
    func isIntact(_ batch: OutgoingBatch) throws(SQLiteError) -> Bool {
        try batchShape.bind(batch.rowID, at: 1)
        let shape = try batchShape.collect { ($0.uuid(at: 0), $0.int64(at: 1)) }.first
        return shape?.0 == batch.id && shape?.1 == Int64(batch.eventCount)
    }

    /// The next batch to send: an unfinished one not in `excluding` (in flight) if there is one,
    /// so a batch interrupted by a failure or a crash goes again with the same id and events;
    /// otherwise a new one of the oldest ready events that share a context, within the bounds.
    /// `nil` when nothing is ready.
    func nextBatch(maxEvents: Int, maxBytes: Int, now: Int64, excluding: Set<Int64> = []) throws(SQLiteError) -> OutgoingBatch? {
        let unfinished = try pendingBatch.collect { ($0.int64(at: 0), $0.uuid(at: 1), $0.int64(at: 2), $0.blob(at: 3)) }
        if let pending = unfinished.first(where: { !excluding.contains($0.0) }) {
            var events: [StoredEvent] = []
            for lane in lanes { events += try readable(try lane.rows(inBatch: pending.0), now: now) }
            if !events.isEmpty || pending.3 != nil {
                return try encode(rowID: pending.0, id: pending.1, contextRowID: pending.2, events: Self.oldestFirst(events),
                                  now: now, diagnostics: pending.3)
            }
            try delete(batch: pending.0)  // its rows are gone (pruned) and it carries nothing else; forget it
        }

        var oldest: (contextRowID: Int64, timestamp: Int64)?
        for lane in lanes {
            if let candidate = try lane.oldestReady(), candidate.timestamp < oldest?.timestamp ?? .max { oldest = candidate }
        }
        guard let contextRowID = oldest?.contextRowID else {
            // No event is ready; prune counts or notes may still be waiting to be told.
            return try diagnosticsOnlyBatch(now: now, excluding: excluding, busy: unfinished.map(\.0))
        }
        // A merge, not a sort: each table's rows keep their id order, so what a batch takes from a
        // table is always a prefix of that table's ready rows, which one UPDATE can mark.
        var candidates: [StoredEvent] = []
        for lane in lanes {
            candidates = Self.merge(candidates, try readable(try lane.ready(contextRowID: contextRowID, limit: maxEvents), now: now))
        }

        // Take events, oldest first, until the count or the byte bound (at least one, whatever its size).
        var sessions: [Int64: UUID] = [:]
        var chosen: [StoredEvent] = []
        var writer = JSONWriter(capacity: 64 << 10)
        var ends: [Int] = []
        var bytes = BatchEncoder.envelopeAllowance
        for event in candidates.prefix(maxEvents) {
            let isNewSession = sessions[event.sessionRowID] == nil
            // The protocol allows 1000 sessions per batch; each adds an entry to the envelope.
            if isNewSession && sessions.count >= BatchEncoder.maxSessions { break }
            let sessionID = try sessionUUID(event.sessionRowID, cache: &sessions)
            let start = writer.count
            BatchEncoder.event(event, session: sessionID, into: &writer)
            let cost = writer.count - start + 1 + (isNewSession ? BatchEncoder.sessionEntryBytes : 0)
            if !chosen.isEmpty && bytes + cost > maxBytes {
                writer.truncate(to: start)
                break
            }
            bytes += cost
            chosen.append(event)
            ends.append(writer.count)
        }
        let encoded = EncodedEvents(bytes: writer.bytes, ends: ends)
        // Each table's share: how many rows, and the range of ids they span (which the batch records).
        var shares: [RecordKind: (count: Int, rows: ClosedRange<Int64>)] = [:]
        for lane in lanes {
            var count = 0, first = Int64.max, last = Int64.min
            for index in chosen.indices where chosen[index].kind == lane.kind {
                count += 1
                first = min(first, chosen[index].rowID)
                last = max(last, chosen[index].rowID)
            }
            if count > 0 { shares[lane.kind] = (count, first...last) }
        }
        let (id, rowID) = try insertBatchRow(contextRowID: contextRowID, now: now, ranges: shares.mapValues(\.rows))
        for lane in lanes {
            guard let share = shares[lane.kind] else { continue }
            try lane.assignReady(contextRowID: contextRowID, count: share.count, rows: share.rows, toBatch: rowID)
        }
        let diagnostics = output == 0 ? try self.diagnostics.take(into: rowID) : nil
        return try encode(rowID: rowID, id: id, contextRowID: contextRowID, events: chosen, now: now, encoded: encoded,
                          diagnostics: diagnostics)
    }

    /// The events as they are to be sent: sealed parameters opened (plaintext exists only in
    /// memory, for the upload). An event whose parameters no longer open (the file was altered,
    /// or a process without the key wrote it) is set aside in quarantine with the reason: never
    /// sent, never silently dropped. It leaves its table in this transaction, so what is
    /// left of the list stays a prefix of the table's ready rows.
    private func readable(_ events: [StoredEvent], now: Int64) throws(SQLiteError) -> [StoredEvent] {
        guard let cipher else { return events }
        var opened: [StoredEvent] = []
        opened.reserveCapacity(events.count)
        for var event in events {
            // Into locals first: nothing opened may reach the quarantine below.
            var start: [UInt8]?
            var end: [UInt8]?
            do {
                if let sealed = event.parameters { start = try cipher.open(sealed, id: event.id, slot: .parameters) }
                if let sealed = event.endParameters { end = try cipher.open(sealed, id: event.id, slot: .endParameters) }
            } catch {
                try quarantine.setAside(undecryptable: event, because: error, cipher: cipher, now: now)
                continue
            }
            event.parameters = start
            event.endParameters = end
            opened.append(event)
        }
        return opened
    }

    /// A batch with no events that carries waiting prune counts and notes, if there are any and
    /// no other batch is unfinished (one will carry them soon enough).
    private func diagnosticsOnlyBatch(now: Int64, excluding: Set<Int64>, busy: [Int64]) throws(SQLiteError) -> OutgoingBatch? {
        guard output == 0, busy.isEmpty, try diagnostics.isWaiting(),
              let contextRowID = try latestContext.collect({ $0.int64(at: 0) }).first else { return nil }
        let (id, rowID) = try insertBatchRow(contextRowID: contextRowID, now: now)
        let diagnostics = try self.diagnostics.take(into: rowID)
        return try encode(rowID: rowID, id: id, contextRowID: contextRowID, events: [], now: now, encoded: EncodedEvents(), diagnostics: diagnostics)
    }

    /// A new `upload_batches` row with a fresh batch id, recording the range of row ids it holds
    /// in each table (none where `ranges` has no entry).
    private func insertBatchRow(contextRowID: Int64, now: Int64, ranges: [RecordKind: ClosedRange<Int64>] = [:]) throws(SQLiteError) -> (id: UUID, rowID: Int64) {
        let id = UUID()
        try insertBatch.bind(id, at: 1)
        try insertBatch.bind(contextRowID, at: 2)
        try insertBatch.bind(now, at: 3)
        var index: Int32 = 4
        for kind in RecordKind.allCases {
            let bounds = ranges[kind].map { ($0.lowerBound, $0.upperBound) } ?? BatchRange.none
            try insertBatch.bind(bounds.0, at: index)
            try insertBatch.bind(bounds.1, at: index + 1)
            index += 2
        }
        guard let rowID = try insertBatch.collect({ $0.int64(at: 0) }).first else {
            throw SQLiteError(code: 1, message: "inserting an upload batch returned no row id")
        }
        return (id, rowID)
    }

    /// Merges two lists, each in id order, by time (the first list's first on ties).
    static func merge(_ points: [StoredEvent], _ spans: [StoredEvent]) -> [StoredEvent] {
        if spans.isEmpty { return points }  // the usual case: one table has ready rows
        if points.isEmpty { return spans }
        var merged: [StoredEvent] = []
        merged.reserveCapacity(points.count + spans.count)
        var p = 0, s = 0
        while p < points.count || s < spans.count {
            if s == spans.count || (p < points.count && points[p].timestamp <= spans[s].timestamp) {
                merged.append(points[p]); p += 1
            } else {
                merged.append(spans[s]); s += 1
            }
        }
        return merged
    }

    private static func oldestFirst(_ events: [StoredEvent]) -> [StoredEvent] {
        events.sorted { ($0.timestamp, $0.kind.order, $0.rowID) < ($1.timestamp, $1.kind.order, $1.rowID) }
    }

    private func sessionUUID(_ rowID: Int64, cache: inout [Int64: UUID]) throws(SQLiteError) -> UUID {
        if let known = cache[rowID] { return known }
        try session.bind(rowID, at: 1)
        let id = try session.collect { $0.uuid(at: 0) }.first ?? .nilUUID
        cache[rowID] = id
        return id
    }

    private func encode(rowID: Int64, id: UUID, contextRowID: Int64, events: [StoredEvent], now: Int64,
                        encoded: EncodedEvents? = nil, diagnostics: [UInt8]?) throws(SQLiteError) -> OutgoingBatch {
        try context.bind(contextRowID, at: 1)
        let json = try context.collect { $0.text(at: 0) }.first ?? nil
        let properties = json.flatMap { try? JSONDecoder().decode(StandardProperties.self, from: Data($0.utf8)) }
            ?? StandardProperties(appID: "unknown", appVersion: "unknown")

        var sessionIDs: [Int64: UUID] = [:]
        var sessionInfos: [BatchEncoder.SessionInfo] = []
        for rowID in Set(events.map(\.sessionRowID)).sorted() {
            try session.bind(rowID, at: 1)
            let row = try session.collect { ($0.uuid(at: 0), $0.int64(at: 1), $0.isNull(at: 2) ? nil : $0.int64(at: 2)) }.first
            let id = row?.0 ?? .nilUUID
            sessionIDs[rowID] = id
            sessionInfos.append(.init(id: id, started: row?.1 ?? 0, ended: row?.2))
        }
        let eventJSON = encoded ?? Self.encode(events, sessions: sessionIDs)
        // Aggregates are a record kind of their own on the wire, listed after the events.
        let isAggregate = events.map { $0.kind == .aggregate }
        let body = BatchEncoder.batch(id: id, sentAt: now, properties: properties, sessions: sessionInfos,
                                      encoded: eventJSON, isAggregate: isAggregate, diagnostics: diagnostics)
        return OutgoingBatch(rowID: rowID, id: id, events: events, body: body, encoded: eventJSON, diagnostics: diagnostics)
    }

    /// The events' JSON, one after another (a batch read again for its retry).
    private static func encode(_ events: [StoredEvent], sessions: [Int64: UUID]) -> EncodedEvents {
        var writer = JSONWriter(capacity: 4_096)
        var ends: [Int] = []
        ends.reserveCapacity(events.count)
        for index in events.indices {
            BatchEncoder.event(events[index], session: sessions[events[index].sessionRowID] ?? .nilUUID, into: &writer)
            ends.append(writer.count)
        }
        return EncodedEvents(bytes: writer.bytes, ends: ends)
    }

    /// The output has the batch: its events are done for it, and leave the device unless another
    /// output still owes them. Returns how many.
    func delivered(_ batch: OutgoingBatch) throws(SQLiteError) -> Int {
        var settled = 0
        for lane in lanes { settled += try lane.settle(batch: batch.rowID) }
        try delete(batch: batch.rowID)
        return settled
    }

    /// The batch will be sent again in smaller pieces: its events become ready again.
    func release(_ batch: OutgoingBatch) throws(SQLiteError) {
        for lane in lanes { try lane.release(batch: batch.rowID) }
        try diagnostics.restore(batch.diagnostics)
        try delete(batch: batch.rowID)
    }

    /// The collector refused this single event for good: keep it aside with the reason, so it
    /// never blocks the events behind it, and can still be inspected.
    func quarantine(_ batch: OutgoingBatch, status: Int, reason: String, now: Int64) throws(SQLiteError) {
        for (event, json) in zip(batch.events, batch.encodedEvents) {
            try quarantine.setAside(refused: event, json: json, status: status, reason: reason, output: output == 0 ? nil : outputID, now: now)
            try lanes.first { $0.kind == event.kind }?.remove(rowID: event.rowID)
        }
        try diagnostics.restore(batch.diagnostics)
        // The collector hears how many of its refusals the device set aside (fleet health).
        if output == 0 {
            for _ in batch.events { try diagnostics.note(kind: DiagnosticRecords.quarantinedKind, detail: "", at: now) }
        }
        try delete(batch: batch.rowID)
    }

    /// Keeps the collector's `Retry-After` across restarts: a process started (or restarted after
    /// a crash) before it ends does not send either.
    func holdUploads(untilMilliseconds until: Int64, status: Int, message: String) throws(SQLiteError) {
        try hold.hold(untilMilliseconds: until, status: status, message: message)
    }

    /// The last hold saved (it may have ended long ago).
    func uploadHold() throws(SQLiteError) -> (untilMilliseconds: Int64, status: Int, message: String)? {
        try hold.current()
    }

    func countAttempt(_ batch: OutgoingBatch) throws(SQLiteError) {
        try countAttempt.bind(batch.rowID, at: 1)
        try countAttempt.run()
    }

    private func delete(batch rowID: Int64) throws(SQLiteError) {
        try deleteBatch.bind(rowID, at: 1)
        try deleteBatch.run()
    }

    func quarantinedCount() throws(SQLiteError) -> Int {
        try quarantine.count()
    }

    /// Events stored and ready for this output, plus those in its unfinished batches.
    func waitingCount() throws(SQLiteError) -> Int {
        var count = 0
        for lane in lanes { count += try lane.waitingCount() }
        return count
    }
}
