import Foundation
@_spi(NFLogShared) import NFLogSupport

/// A result row an export line is written from, whichever database it came from: the SQLite
/// store's statement, or a PostgreSQL row (PostgresExportRow). Both stores select the same
/// columns in the same order, so one line writer (EventExporter, AggregateExporter) serves both
/// and their exports are the same bytes.
protocol ExportRow {
    func text(at column: Int32) -> String?
    func uuid(at column: Int32) -> UUID
    func int64(at column: Int32) -> Int64
    func double(at column: Int32) -> Double
    /// A JSON text column's bytes, verbatim.
    func blob(at column: Int32) -> [UInt8]?
    func isNull(at column: Int32) -> Bool
}

extension SQLiteStatement: ExportRow {}
