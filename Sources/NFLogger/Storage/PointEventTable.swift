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
        try bind(Row(event: event, sessionRowID: sessionRowID, priority: priority), to: insertStatement, offset: 0)
        try insertStatement.run()
    }

    /// Inserts `rows` in order (their row ids ascend in that order), ``rowsPerInsert`` to a
    /// statement, the rest one each.
    func insert(_ rows: ArraySlice<Row>) throws(SQLiteError) {
        var rest = rows
        while rest.count >= Self.rowsPerInsert {
            var offset: Int32 = 0
            for row in rest.prefix(Self.rowsPerInsert) {
                try bind(row, to: insertManyStatement, offset: offset)
                offset += Self.columnCount
            }
            try insertManyStatement.run()
            rest = rest.dropFirst(Self.rowsPerInsert)
        }
        for row in rest {
            try bind(row, to: insertStatement, offset: 0)
            try insertStatement.run()
        }
    }

    private func bind(_ row: Row, to statement: SQLiteStatement, offset: Int32) throws(SQLiteError) {
        try statement.bindCommonColumns(of: row.event, sessionRowID: row.sessionRowID, cipher: cipher, offset: offset)
        try statement.bind(Int64(row.priority), at: offset + 7)
        try statement.bind(Int64(row.event.held ? 1 : 0), at: offset + 8)
        try statement.bindTransaction(of: row.event, at: offset + 9)
    }

    func count() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM point_events"))
    }
}
