import Logging
import NFLogSupport

/// Everything that exists only while the database is open: the connection and what is prepared
/// on it. Only the DatabaseManager holds one, and lends it during its entry points, so it is
/// used on the RequestManager's queue alone.
struct OpenDatabase {
    let connection: SQLiteConnection
    let tables: EventTableFactory
    let sessions: SessionTable
    let diagnostics: DiagnosticRecords
    let outbox: Outbox
    let pruner: Pruner

    init(connection: SQLiteConnection, path: String, cipher: ParameterCipher?, logger: Logger) throws(SQLiteError) {
        self.connection = connection
        tables = try EventTableFactory(connection: connection, cipher: cipher)
        sessions = try SessionTable(connection: connection)
        diagnostics = try DiagnosticRecords(connection: connection)
        outbox = try Outbox(connection: connection, tables: tables, diagnostics: diagnostics, cipher: cipher, logger: logger)
        pruner = try Pruner(connection: connection, path: path)
    }
}
