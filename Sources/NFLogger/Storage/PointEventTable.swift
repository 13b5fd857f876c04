@_spi(NFLogShared) import NFLogSupport
/// `point_events`: one row per point event.
final class PointEventTable: EventTable {
    let kind = RecordKind.point
    let tableName = "point_events"
    let uploadColumns = "e.uuid, e.session_id, e.name, e.type, e.parameters, e.timestamp_ms, NULL, NULL, NULL, 0, e.transaction_id, e.parent_span, NULL, e.web_origin"
    let timeColumn = "timestamp_ms"
    let readyCondition = ""
    private let connection: SQLiteConnection
    private let insertStatement: SQLiteStatement
    /// ``rowsPerInsert`` rows in one statement: a statement's run has a fixed cost (cursors
    /// opened and closed on the table and each index, the statement's end) that one row per run
    /// paid in full.
    private let insertManyStatement: SQLiteStatement
    private let cipher: ParameterCipher?
    /// The rows a multi-row insert takes; fewer go one statement each.
    static let rowsPerInsert = 16
    private static let columns = "(uuid, session_id, name, type, parameters, timestamp_ms, priority, held, transaction_id, parent_span, web_origin)"
    private static let rowPlaceholders = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    private static let columnCount: Int32 = 11

    init(connection: SQLiteConnection, cipher: ParameterCipher?) throws(SQLiteError) {
        self.connection = connection
        self.cipher = cipher
        insertStatement = try connection.prepare("INSERT INTO point_events \(Self.columns) VALUES \(Self.rowPlaceholders)")
        let rows = Array(repeating: Self.rowPlaceholders, count: Self.rowsPerInsert).joined(separator: ", ")
        insertManyStatement = try connection.prepare("INSERT INTO point_events \(Self.columns) VALUES \(rows)")
    }

    /// A row to insert: the event, its session's row id, its priority.
    struct Row {
        let event: EventRecord
        let sessionRowID: Int64
        let priority: Int
    }

    func insert(_ event: EventRecord, sessionRowID: Int64, priority: Int) throws(SQLiteError) {
        try insert([Row(event: event, sessionRowID: sessionRowID, priority: priority)][...])
    }

    /// Inserts `rows` in order (their row ids ascend in that order), ``rowsPerInsert`` to a
    /// statement, the rest one each.
    func insert(_ rows: ArraySlice<Row>) throws(SQLiteError) {
        var rest = rows
        while rest.count >= Self.rowsPerInsert {
            try bindAndRun(rest.prefix(Self.rowsPerInsert), from: rest.startIndex, insertManyStatement, offset: 0)
            rest = rest.dropFirst(Self.rowsPerInsert)
        }
        for index in rest.indices {
            try bindAndRun(rest[index...index], from: index, insertStatement, offset: 0)
        }
    }

    /// Binds `rows[position...]` (each row `columnCount` parameters after the last) and runs
    /// the statement. The texts and blobs are lent to SQLite, not copied: each row's are bound
    /// inside the closures that lend them, which are all still open when the innermost call
    /// runs the statement (it resets and clears the bindings before they close).
    private func bindAndRun(_ rows: ArraySlice<Row>, from position: Int, _ statement: SQLiteStatement, offset: Int32) throws(SQLiteError) {
        guard position < rows.endIndex else { return try statement.run() }
        let row = rows[position]
        let event = row.event
        do {
            try statement.bind(row.sessionRowID, at: offset + 2)
            try statement.bind(event.draft.wallMilliseconds, at: offset + 6)
            try statement.bind(Int64(row.priority), at: offset + 7)
            try statement.bind(Int64(event.held ? 1 : 0), at: offset + 8)
            try statement.bindTransaction(of: event, at: offset + 9)
        } catch {
            statement.reset()  // the rows before lent their bytes: nothing stays bound
            throw error
        }
        try statement.lending(event.id, at: offset + 1) { () throws(SQLiteError) in
            try statement.lending(text: event.draft.name, at: offset + 3) { () throws(SQLiteError) in
                try statement.lending(text: event.draft.type, at: offset + 4) { () throws(SQLiteError) in
                    try statement.lendingParameters(event.draft.parameters, id: event.id, slot: .parameters, cipher: cipher,
                                                    at: offset + 5) { () throws(SQLiteError) in
                        try bindAndRun(rows, from: position + 1, statement, offset: offset + Self.columnCount)
                    }
                }
            }
        }
    }

    func count() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM point_events"))
    }
}
