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
    private let cipher: ParameterCipher?

    init(connection: SQLiteConnection, cipher: ParameterCipher?) throws(SQLiteError) {
        self.connection = connection
        self.cipher = cipher
        insertStatement = try connection.prepare("""
            INSERT INTO point_events (uuid, session_id, name, type, parameters, timestamp_ms, priority, held, transaction_id, parent_span, web_origin)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
    }

    func insert(_ event: EventRecord, sessionRowID: Int64, priority: Int) throws(SQLiteError) {
        try insertStatement.bindCommonColumns(of: event, sessionRowID: sessionRowID, cipher: cipher)
        try insertStatement.bind(Int64(priority), at: 7)
        try insertStatement.bind(Int64(event.held ? 1 : 0), at: 8)
        try insertStatement.bindTransaction(of: event, at: 9)
        try insertStatement.run()
    }

    func count() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM point_events"))
    }
}
