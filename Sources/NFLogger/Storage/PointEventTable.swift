/// `point_events`: one row per point event.
final class PointEventTable: EventTable {
    let kind = EventKind.point
    private let connection: SQLiteConnection
    private let insertStatement: SQLiteStatement

    init(connection: SQLiteConnection) throws(StorageError) {
        self.connection = connection
        insertStatement = try connection.prepare("""
            INSERT INTO point_events (uuid, session_id, name, type, parameters, timestamp_ms)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
    }

    func insert(_ event: EventRecord, sessionRowID: Int64) throws(StorageError) {
        try insertStatement.bindCommonColumns(of: event, sessionRowID: sessionRowID)
        try insertStatement.run()
    }

    func count() throws(StorageError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM point_events"))
    }
}
