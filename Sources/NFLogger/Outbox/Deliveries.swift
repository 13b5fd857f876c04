@_spi(NFLogShared) import NFLogSupport

/// The `deliveries` table's own statements: what each durable output other than the collector
/// is owed, and the `outputs` that number them. The ``OutputLane``s queue and settle through it;
/// this is the rest: owing a new record, forgetting a record that leaves its table another way,
/// and numbering the configured outputs.
///
/// Runs inside its caller's transaction on the RequestManager's queue, like the Outbox.
final class Deliveries {
    private let connection: SQLiteConnection
    private let owe: SQLiteStatement
    private let forgetRow: SQLiteStatement
    private let park: [RecordKind: SQLiteStatement]

    init(connection: SQLiteConnection, tables: EventTableFactory) throws(SQLiteError) {
        self.connection = connection
        owe = try connection.prepare("INSERT OR IGNORE INTO deliveries (output, kind, row) VALUES (?, ?, ?)")
        forgetRow = try connection.prepare("DELETE FROM deliveries WHERE kind = ? AND row = ?")
        var park: [RecordKind: SQLiteStatement] = [:]
        for table in tables.all {
            park[table.kind] = try connection.prepare("UPDATE \(table.tableName) SET batch_id = 0 WHERE id = ?")
        }
        self.park = park
    }

    /// Routes a record just written: owed to `outputs`, and left out of the collector's queue
    /// unless it takes it.
    func route(kind: RecordKind, row: Int64, collector: Bool, outputs: [Int64]) throws(SQLiteError) {
        for output in outputs {
            try owe.bind(output, at: 1)
            try owe.bind(kind.code, at: 2)
            try owe.bind(row, at: 3)
            try owe.run()
        }
        if !collector, let park = park[kind] {
            try park.bind(row, at: 1)
            try park.run()
        }
    }

    /// A record left its table (folded into an aggregate, pruned, deleted by a consent denial):
    /// no output is owed it any more.
    func forget(kind: RecordKind, row: Int64) throws(SQLiteError) {
        try forgetRow.bind(kind.code, at: 1)
        try forgetRow.bind(row, at: 2)
        try forgetRow.run()
    }

    /// Numbers the durable outputs configured now (ids kept from earlier runs keep their numbers),
    /// and forgets what outputs no longer configured were owed: removing an output from the
    /// configuration (the collector too, when `collector` is false) gives up its undelivered
    /// events. Records the collector is done with and no output owes any more leave their tables.
    func register(_ ids: [String], collector: Bool, tables: EventTableFactory) throws(SQLiteError) -> [String: Int64] {
        let insert = try connection.prepare("INSERT OR IGNORE INTO outputs (id) VALUES (?)")
        for id in ids {
            try insert.bind(id, at: 1)
            try insert.run()
        }
        let known = try connection.prepare("SELECT id, number FROM outputs").collect { ($0.text(at: 0) ?? "", $0.int64(at: 1)) }
        var numbers: [String: Int64] = [:]
        for (id, number) in known where ids.contains(id) { numbers[id] = number }
        let kept = numbers.values.map(String.init).joined(separator: ",")
        try connection.execute("DELETE FROM deliveries WHERE output NOT IN (\(kept))")
        try connection.execute("DELETE FROM output_holds WHERE output NOT IN (\(kept))")
        try connection.execute("DELETE FROM upload_batches WHERE output <> 0 AND output NOT IN (\(kept))")
        if !collector {
            try connection.execute("DELETE FROM upload_batches WHERE output = 0")
            for table in tables.all { try connection.execute("UPDATE \(table.tableName) SET batch_id = 0 WHERE batch_id IS NOT 0") }
        }
        for table in tables.all {
            try connection.execute("""
                DELETE FROM \(table.tableName) WHERE batch_id = 0
                AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.kind = \(table.kind.code) AND d.row = \(table.tableName).id)
                """)
        }
        return numbers
    }
}
