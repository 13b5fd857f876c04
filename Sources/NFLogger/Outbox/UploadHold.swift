@_spi(NFLogShared) import NFLogSupport

/// The collector's `Retry-After`, kept in the database (`upload_hold`) so that a process started
/// (or restarted after a crash) before it ends does not send either.
///
/// Runs inside its caller's transaction on the RequestManager's queue, like the Outbox.
final class UploadHold {
    private let save: SQLiteStatement
    private let read: SQLiteStatement

    /// - Parameter output: 0, the collector at `upload_url` (`upload_hold`), or another durable
    ///   output's number (`output_holds`).
    init(connection: SQLiteConnection, output: Int64 = 0) throws(SQLiteError) {
        let (table, key, value) = output == 0 ? ("upload_hold", "id", 1) : ("output_holds", "output", output)
        // Of two holds, the later stands.
        save = try connection.prepare("""
            INSERT INTO \(table) (\(key), until_ms, status, message) VALUES (\(value), ?, ?, ?)
            ON CONFLICT (\(key)) DO UPDATE SET until_ms = excluded.until_ms, status = excluded.status, message = excluded.message
            WHERE excluded.until_ms > \(table).until_ms
            """)
        read = try connection.prepare("SELECT until_ms, status, message FROM \(table) WHERE \(key) = \(value)")
    }

    /// Holds uploads until `until` (Unix milliseconds), unless a later hold is already saved.
    func hold(untilMilliseconds until: Int64, status: Int, message: String) throws(SQLiteError) {
        try save.bind(until, at: 1)
        try save.bind(Int64(status), at: 2)
        try save.bind(String(message.prefix(500)), at: 3)
        try save.run()
    }

    /// The last hold saved (it may have ended long ago).
    func current() throws(SQLiteError) -> (untilMilliseconds: Int64, status: Int, message: String)? {
        try read.collect { (row) -> (Int64, Int, String) in (row.int64(at: 0), Int(row.int64(at: 1)), row.text(at: 2) ?? "") }.first
    }
}
