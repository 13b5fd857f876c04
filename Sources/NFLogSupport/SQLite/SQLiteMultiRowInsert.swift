public import Foundation

/// One `INSERT`'s prepared statements for many rows at a time, and how a run of rows is split
/// among them: as many of the largest as fit, then a quarter as many, then one row each.
///
/// A statement's run has a fixed cost (a cursor opened and closed on the table and on each of
/// its indexes, the statement's end) that one row per run paid in full. The device's point rows
/// and the collector's events both insert this way.
///
/// Confined, like its connection, to its owner's serial queue.
@_spi(NFLogShared) public final class SQLiteMultiRowInsert {
    /// Largest first.
    private let many: [(rows: Int, statement: SQLiteStatement)]
    /// The statement for one row.
    @_spi(NFLogShared) public let one: SQLiteStatement

    /// Prepares `sql(n)` for `rowsPerStatement` rows, a quarter as many, and one.
    @_spi(NFLogShared) public init(_ connection: SQLiteConnection, rowsPerStatement: Int,
                                   sql: (Int) -> String) throws(SQLiteError) {
        one = try connection.prepare(sql(1))
        many = try [rowsPerStatement, rowsPerStatement / 4].filter { $0 > 1 }.map { (rows) throws(SQLiteError) in
            (rows, try connection.prepare(sql(rows)))
        }
    }

    /// Splits `count` rows, in order, into runs and hands each to `body` with its statement: the
    /// positions (from 0) and the statement whose row count is the run's length.
    @_spi(NFLogShared) public func forEachRun(count: Int,
                                              _ body: (Range<Int>, SQLiteStatement) throws(SQLiteError) -> Void) throws(SQLiteError) {
        var start = 0
        for (rows, statement) in many {
            while count - start >= rows {
                try body(start..<(start + rows), statement)
                start += rows
            }
        }
        while start < count {
            try body(start..<(start + 1), one)
            start += 1
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `string`'s UTF-8 with one copy (its contiguous storage, not byte by byte), and
    /// returns where it lies, for ``LentBytes/bind(offset:count:asText:at:)``.
    @_spi(NFLogShared) @inlinable public mutating func appendUTF8(_ string: String) -> (offset: Int, count: Int) {
        let offset = count
        var string = string
        string.withUTF8 { append(contentsOf: $0) }
        return (offset, count - offset)
    }

    /// Appends a UUID's 16 raw bytes (as both ends store it) and returns where they lie.
    @_spi(NFLogShared) @inlinable public mutating func appendBytes(of id: UUID) -> (offset: Int, count: Int) {
        let offset = count
        Swift.withUnsafeBytes(of: id.uuid) { append(contentsOf: $0) }
        return (offset, 16)
    }
}
