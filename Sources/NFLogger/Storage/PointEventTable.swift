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
        let statement = insertStatement
        event.id.withBytes { statement.bindBlob($0, at: 1) }
        statement.bind(sessionRowID, at: 2)
        statement.bind(event.draft.name, at: 3)
        statement.bind(event.draft.type, at: 4)
        statement.bindText(event.draft.parameters, at: 5)
        statement.bind(event.draft.wallMilliseconds, at: 6)
        try statement.run()
    }

    func count() throws(StorageError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM point_events"))
    }
}
