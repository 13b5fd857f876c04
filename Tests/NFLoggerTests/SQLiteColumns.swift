import CSQLite
@_spi(NFLogShared) import NFLogSupport
@testable import NFLogger

enum ColumnType { case null, integer, text, blob }

func sqlite3ColumnNames(_ statement: SQLiteStatement) -> [String] {
    (0..<sqlite3_column_count(statement.handle)).map { String(cString: sqlite3_column_name(statement.handle, $0)) }
}

func sqlite3ColumnType(_ statement: SQLiteStatement, _ column: Int32) -> ColumnType {
    switch sqlite3_column_type(statement.handle, column) {
    case SQLITE_INTEGER: .integer
    case SQLITE_TEXT: .text
    case SQLITE_BLOB: .blob
    default: .null
    }
}
