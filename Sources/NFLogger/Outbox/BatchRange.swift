/// How one of the collector's batches finds its rows in a table: the rows between the first and
/// last id it recorded for that table in `upload_batches`, marked with its id (schema version 12).
///
/// Marking rows for a batch and deleting them once delivered then touch no index: an index on
/// `batch_id` took an insert and a delete per row, much of what delivering an event cost. A batch
/// recorded before version 12 has no range, and is looked for in the whole table (once).
enum BatchRange {
    /// The `upload_batches` columns holding the first and last id of `kind`'s rows in a batch.
    static func columns(_ kind: RecordKind) -> (first: String, last: String) {
        ("\(kind.rawValue)_first", "\(kind.rawValue)_last")
    }

    /// How a batch records that it holds no row of a table: first > last.
    static let none: (first: Int64, last: Int64) = (1, 0)

    /// SQL that is true for the rows of `kind`'s table in batch `batch` (an SQL expression: `?1`,
    /// `b.id`). `alias` qualifies the table's columns (`e.`); "" leaves them bare (an UPDATE or
    /// DELETE). Both bounds are constant for the statement (or for each batch, in a join on
    /// `upload_batches`), so SQLite reads the range only; the `+` keeps it from building a
    /// temporary index on `batch_id` instead.
    static func rows(of kind: RecordKind, inBatch batch: String, alias: String = "") -> String {
        let (first, last) = columns(kind)
        let lower = "coalesce((SELECT \(first) FROM upload_batches WHERE upload_batches.id = \(batch)), 0)"
        let upper = "coalesce((SELECT \(last) FROM upload_batches WHERE upload_batches.id = \(batch)), \(Int64.max))"
        return "\(alias)id BETWEEN \(lower) AND \(upper) AND +\(alias)batch_id = \(batch)"
    }
}
