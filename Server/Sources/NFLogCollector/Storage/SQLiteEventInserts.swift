import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Stores a batch's events in `events`, many rows to a statement, and says which were new.
///
/// A statement's run has a fixed cost that one row per run paid in full: a cursor opened and
/// closed on the table and on each of its eight indexes, and the statement's end (half the
/// writer's time went to `sqlite3VdbeHalt`, cursors and their memory at one row per run). So
/// rows go ``rowsPerInsert`` to a statement, then fewer (``SQLiteMultiRowInsert``); their texts
/// and blobs are copied once into a buffer lent to SQLite (not copied again by it).
///
/// `ON CONFLICT (app, uuid) DO NOTHING` keeps each event once. Which rows a statement inserted:
/// every new row gets the largest row id so far plus one, in the order of `VALUES`, so when a
/// statement inserted every row (`changes`), they are the ids after the largest before it. When
/// it did not (a batch sent again, or a uuid twice in one batch), each row is looked up by its
/// uuid: new if its id is past that largest, and only for the first row that claims it. Near
/// `Int64.max`, where SQLite picks ids at random, rows go one to a statement (an independent
/// review's finding: they were counted as duplicates).
///
/// Used only on the store's writer queue, like its connection.
final class SQLiteEventInserts {
    static let rowsPerInsert = 64
    /// The parameters each row binds (numbered from the row's first one).
    private static let columnCount: Int32 = 21

    private let connection: SQLiteConnection
    private let inserts: SQLiteMultiRowInsert
    private let largestID: SQLiteStatement
    private let findID: SQLiteStatement
    /// A statement's texts and blobs, kept (with its capacity, up to ``keptArenaBytes``) from one
    /// statement to the next.
    private var arena: [UInt8] = []
    /// 64 typical events take ~10 KB; a batch of large parameters may take megabytes once, which
    /// the store does not then hold for good.
    private static let keptArenaBytes = 1 << 20
    private var slices: [Slice] = []

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        inserts = try SQLiteMultiRowInsert(connection, rowsPerStatement: Self.rowsPerInsert, sql: Self.insertSQL(rows:))
        largestID = try connection.prepare("SELECT coalesce(max(id), 0) FROM events")
        findID = try connection.prepare("SELECT id FROM events WHERE app = ? AND uuid = ?")
    }

    /// `INSERT … VALUES (…), (…) ON CONFLICT DO NOTHING` for `rows` rows: row `r` binds
    /// parameters `r × 21 + 1` to `r × 21 + 21` (given_up is the 21st, as in the one-row form
    /// before: columns added by later migrations were numbered after it).
    static func insertSQL(rows: Int) -> String {
        let values = (0..<rows).map { row in
            let base = row * Int(columnCount)
            let order = Array(1...15) + [21, 16, 17, 18, 19, 20]
            return "(" + order.map { "?\(base + $0)" }.joined(separator: ", ") + ")"
        }
        return """
            INSERT INTO events (app, uuid, batch_id, session, context_id, name, kind, type, timestamp_ms,
                                end_ms, duration_ms, parameters, end_parameters, received_ms, abandoned, given_up,
                                transaction_id, parent_span, span_id, source, origin)
            VALUES \(values.joined(separator: ", "))
            ON CONFLICT (app, uuid) DO NOTHING
            """
    }

    /// What every row of a batch shares.
    struct Shared {
        let app: String
        let batch: UUID
        let context: Int64
        let receivedAt: Int64
    }

    /// Inserts `events` in order. Returns, for each, the row id it was stored as, or `nil` when it
    /// was stored already (by an earlier batch, or earlier in this one).
    func insert(_ events: [Batch.Event], _ shared: Shared) throws(SQLiteError) -> [Int64?] {
        var ids: [Int64?] = []
        ids.reserveCapacity(events.count)
        try inserts.forEachRun(count: events.count) { (run, statement) throws(SQLiteError) in
            try insert(events[run], statement, shared, into: &ids)
        }
        return ids
    }

    private func insert(_ rows: ArraySlice<Batch.Event>, _ statement: SQLiteStatement, _ shared: Shared,
                        into ids: inout [Int64?]) throws(SQLiteError) {
        guard rows.count > 1 else {
            // One row: it is new if it was inserted, with the id SQLite gave it.
            try bindAndRun(rows, statement, shared)
            ids.append(connection.changes > 0 ? connection.lastInsertRowID : nil)
            return
        }
        let largest = try largestID.collect { $0.int64(at: 0) }.first ?? 0
        guard largest <= Int64.max - Int64(rows.count) else {
            // Past the largest id SQLite gives in order it picks free ids at random, below the
            // largest as often as not: one row to a statement, as above.
            for index in rows.indices { try insert(rows[index...index], inserts.one, shared, into: &ids) }
            return
        }
        try bindAndRun(rows, statement, shared)
        if connection.changes == rows.count {
            for offset in 0..<rows.count { ids.append(largest + 1 + Int64(offset)) }
            return
        }
        var claimed = Set<Int64>()
        for event in rows {
            try findID.bind(shared.app, at: 1)
            try findID.bind(event.id, at: 2)
            let id = try findID.collect { $0.int64(at: 0) }.first
            if let id, id > largest, claimed.insert(id).inserted { ids.append(id) } else { ids.append(nil) }
        }
    }

    /// Where one of a row's texts or blobs lies in ``arena``; `nil` binds NULL.
    private struct Slice {
        var offset = 0, count: Int?

        init(_ bytes: (offset: Int, count: Int)?) {
            if let bytes { (offset, count) = (bytes.offset, bytes.count) }
        }
    }

    private func bindAndRun(_ rows: ArraySlice<Batch.Event>, _ statement: SQLiteStatement, _ shared: Shared) throws(SQLiteError) {
        // Worked on as a local and put back after: a class's stored array is checked for
        // exclusive access on every use.
        var arena: [UInt8] = []
        swap(&arena, &self.arena)
        defer {
            // Kept for the next statement, unless one client's large events made it large.
            arena.removeAll(keepingCapacity: arena.capacity <= Self.keptArenaBytes)
            swap(&arena, &self.arena)
        }
        let app = Slice(arena.appendUTF8(shared.app))
        let batch = Slice(arena.appendBytes(of: shared.batch))
        // Ten per row, flat (an array per row would be an allocation per row).
        var slices: [Slice] = []
        swap(&slices, &self.slices)
        defer {
            slices.removeAll(keepingCapacity: true)
            swap(&slices, &self.slices)
        }
        for event in rows {
            slices.append(Slice(arena.appendBytes(of: event.id)))
            slices.append(Slice(arena.appendBytes(of: event.session)))
            slices.append(Slice(arena.appendUTF8(event.name)))
            slices.append(Slice(arena.appendUTF8(event.kind.rawValue)))
            slices.append(Slice(arena.appendUTF8(event.type)))
            slices.append(Slice(event.parameters.map { arena.appendUTF8($0) }))
            slices.append(Slice(event.endParameters.map { arena.appendUTF8($0) }))
            slices.append(Slice(event.transaction.map { arena.appendBytes(of: $0) }))
            slices.append(Slice(event.source == .web ? arena.appendUTF8(event.source.rawValue) : nil))
            slices.append(Slice(event.origin.map { arena.appendUTF8($0) }))
        }
        try statement.lending(arena: arena) { (lent) throws(SQLiteError) in
            func bind(_ slice: Slice, text: Bool, at index: Int32) throws(SQLiteError) {
                try lent.bind(offset: slice.offset, count: slice.count, asText: text, at: index)
            }
            var base: Int32 = 0
            var first = 0
            for event in rows {
                try bind(app, text: true, at: base + 1)
                try bind(slices[first], text: false, at: base + 2)
                try bind(batch, text: false, at: base + 3)
                try bind(slices[first + 1], text: false, at: base + 4)
                try statement.bind(shared.context, at: base + 5)
                try bind(slices[first + 2], text: true, at: base + 6)
                try bind(slices[first + 3], text: true, at: base + 7)
                try bind(slices[first + 4], text: true, at: base + 8)
                try statement.bind(event.timestamp, at: base + 9)
                if let end = event.end { try statement.bind(end, at: base + 10) } else { try statement.bindNull(at: base + 10) }
                if let duration = event.durationMilliseconds {
                    try statement.bind(duration, at: base + 11)
                } else {
                    try statement.bindNull(at: base + 11)
                }
                try bind(slices[first + 5], text: true, at: base + 12)
                try bind(slices[first + 6], text: true, at: base + 13)
                try statement.bind(shared.receivedAt, at: base + 14)
                try statement.bind(Int64(event.abandoned ? 1 : 0), at: base + 15)
                // The transaction's columns: a span's own id only for a span in a transaction, so
                // events_transactions and events_runs hold only those.
                try bind(slices[first + 7], text: false, at: base + 16)
                if let parent = event.parentSpan { try statement.bind(parent.storedValue, at: base + 17) } else { try statement.bindNull(at: base + 17) }
                if event.transaction != nil, event.kind == .span, let span = SpanID(spanUUID: event.id) {
                    try statement.bind(span.storedValue, at: base + 18)
                } else {
                    try statement.bindNull(at: base + 18)
                }
                // Both NULL for a native event, so that the events_web index holds web events only.
                try bind(slices[first + 8], text: true, at: base + 19)
                try bind(slices[first + 9], text: true, at: base + 20)
                if let givenUp = event.givenUp { try statement.bind(Int64(givenUp ? 1 : 0), at: base + 21) } else { try statement.bindNull(at: base + 21) }
                base += Self.columnCount
                first += 10
            }
            try statement.run()
        }
    }
}
