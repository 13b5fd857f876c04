import Logging
@_spi(NFLogShared) import NFLogSupport

/// Everything that exists only while the database is open: the connection and what is prepared
/// on it. Only the DatabaseManager holds one, and lends it during its entry points, so it is
/// used on the RequestManager's queue alone.
struct OpenDatabase {
    let connection: SQLiteConnection
    let tables: EventTableFactory
    let sessions: SessionTable
    let diagnostics: DiagnosticRecords
    /// The collector's.
    let outbox: Outbox
    /// Every durable output's, by output id (the collector's under `collector`).
    let outboxes: [String: Outbox]
    let deliveries: Deliveries
    /// The other durable outputs' numbers in `deliveries`, by id.
    let outputNumbers: [String: Int64]
    let pruner: Pruner

    init(connection: SQLiteConnection, path: String, cipher: ParameterCipher?, outputs: DurableOutputSet,
         logger: Logger) throws(SQLiteError) {
        self.connection = connection
        tables = try EventTableFactory(connection: connection, cipher: cipher)
        sessions = try SessionTable(connection: connection)
        diagnostics = try DiagnosticRecords(connection: connection)
        deliveries = try Deliveries(connection: connection, tables: tables)
        let (tables, deliveries) = (tables, deliveries)
        outputNumbers = try connection.transaction { () throws(SQLiteError) -> [String: Int64] in
            try deliveries.register(outputs.others.map(\.id), collector: outputs.hasCollector, tables: tables)
        }
        let tracksOthers = outputs.tracksOthers
        outbox = try Outbox(connection: connection, tables: tables, diagnostics: diagnostics, cipher: cipher, logger: logger,
                            tracksOthers: tracksOthers)
        var outboxes = [Configuration.collectorOutputID: outbox]
        for (id, number) in outputNumbers {
            outboxes[id] = try Outbox(connection: connection, tables: tables, diagnostics: diagnostics, cipher: cipher, logger: logger,
                                      output: number, outputID: id, tracksOthers: tracksOthers)
        }
        self.outboxes = outboxes
        pruner = try Pruner(connection: connection, path: path, outputs: outputNumbers, tracksOthers: tracksOthers)
    }
}
