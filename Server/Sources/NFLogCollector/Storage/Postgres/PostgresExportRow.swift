import Foundation
import PostgresNIO

/// A PostgreSQL result row read as an ``ExportRow``: the export queries select the SQLite ones'
/// columns in the same order, booleans as integers and JSON as text, so the shared line writers
/// produce the same bytes from either store. A cell that does not decode reads as NULL / 0 (the
/// queries' types make that unreachable).
struct PostgresExportRow: ExportRow {
    let row: PostgresRandomAccessRow

    init(_ row: PostgresRow) { self.row = row.makeRandomAccess() }

    func text(at column: Int32) -> String? { try? row[Int(column)].decode(String?.self) }
    func uuid(at column: Int32) -> UUID { (try? row[Int(column)].decode(UUID.self)) ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    func int64(at column: Int32) -> Int64 { (try? row[Int(column)].decode(Int64?.self)) ?? 0 }
    func double(at column: Int32) -> Double { (try? row[Int(column)].decode(Double?.self)) ?? 0 }
    func blob(at column: Int32) -> [UInt8]? { text(at: column).map { Array($0.utf8) } }
    func isNull(at column: Int32) -> Bool { row[Int(column)].bytes == nil }
}
