@_spi(NFLogShared) import NFLogSupport

/// Retention on SQLite: old rows deleted in bounded transactions on the writer, so uploads are
/// stored between them (each waits at most one of them), and a long deletion never holds the
/// write lock for long or grows the write-ahead log by more than a transaction's worth.
extension SQLiteEventStore {
    /// The most rows one retention transaction deletes (about 10,000 events' pages; tens of
    /// milliseconds).
    static let retentionTransactionRows = 10_000

    /// What one retention run dropped, and in how many transactions.
    struct Expired: Sendable, Equatable {
        var events = 0, aggregates = 0, sessions = 0, batches = 0
        var transactions = 0
    }

    /// The tables retention deletes from, in this order: a session goes only once the events
    /// and aggregates that could name it have gone.
    enum RetentionStep: CaseIterable, Sendable {
        case events, aggregates, sessions, batches

        /// Deletes up to `limit` rows of this step received before `cutoff`, counts the dropped
        /// events or aggregates in their apps' totals, and returns how many rows went.
        func run(_ c: SQLiteConnection, cutoff: Int64, limit: Int) throws(SQLiteError) -> Int {
            switch self {
            case .events: try Self.dropCounted(c, table: "events", index: "events_received", total: "events_expired", cutoff, limit)
            case .aggregates:
                try Self.dropCounted(c, table: "aggregates", index: "aggregates_received", total: "aggregates_expired", cutoff, limit)
            case .sessions: try Self.drop(c, table: "sessions", cutoff, limit)
            case .batches: try Self.drop(c, table: "batches", cutoff, limit)
            }
        }

        /// Events or aggregates: found through their receive-time index, oldest first, and
        /// counted per app.
        private static func dropCounted(_ c: SQLiteConnection, table: String, index: String, total: String,
                                        _ cutoff: Int64, _ limit: Int) throws(SQLiteError) -> Int {
            let delete = try c.prepare("""
                DELETE FROM \(table) WHERE id IN (
                    SELECT id FROM \(table) INDEXED BY \(index) WHERE received_ms < ?1 ORDER BY received_ms LIMIT ?2)
                RETURNING app
                """)
            try delete.bind(cutoff, at: 1)
            try delete.bind(Int64(limit), at: 2)
            var perApp: [String: Int64] = [:]
            var dropped = 0
            for app in try delete.collect({ $0.text(at: 0) ?? "" }) {
                perApp[app, default: 0] += 1
                dropped += 1
            }
            let count = try c.prepare("UPDATE totals SET \(total) = \(total) + ?1 WHERE app = ?2")
            for (app, n) in perApp {
                try count.bind(n, at: 1)
                try count.bind(app, at: 2)
                try count.run()
            }
            return dropped
        }

        /// Sessions and batches, by their last receive time: a scan (a row per session or per
        /// request, not per event), stopped once `limit` rows are found. Sessions stored before
        /// migration 8 have no receive time (NULL) and stay.
        private static func drop(_ c: SQLiteConnection, table: String, _ cutoff: Int64, _ limit: Int) throws(SQLiteError) -> Int {
            let delete = try c.prepare("""
                DELETE FROM \(table) WHERE (app, uuid) IN (
                    SELECT app, uuid FROM \(table) WHERE last_received_ms < ?1 LIMIT ?2)
                """)
            try delete.bind(cutoff, at: 1)
            try delete.bind(Int64(limit), at: 2)
            try delete.run()
            return c.changes
        }
    }

    package func dropEvents(receivedBefore cutoff: Int64) async throws -> Int {
        try await dropExpired(receivedBefore: cutoff).events
    }

    /// Deletes what was received before `cutoff`, step by step (``RetentionStep``), each in
    /// transactions of at most `transactionRows` rows, queued on the writer one at a time, so
    /// that the uploads queued meanwhile are stored between them. Stops with `CancellationError`
    /// between two transactions when its task is cancelled (what is left goes at the next run).
    /// - Parameter afterTransaction: called after each commit with the totals so far (tests).
    func dropExpired(receivedBefore cutoff: Int64, transactionRows: Int = retentionTransactionRows,
                     afterTransaction: @Sendable (Expired) async -> Void = { _ in }) async throws -> Expired {
        let transactionRows = max(1, transactionRows)  // never a transaction that deletes nothing, for ever
        var expired = Expired()
        for step in RetentionStep.allCases {
            while true {
                try Task.checkCancellation()
                let dropped = try await onWriter { connection in
                    try connection.transaction { () throws(SQLiteError) -> Int in
                        try step.run(connection, cutoff: cutoff, limit: transactionRows)
                    }
                }
                switch step {
                case .events: expired.events += dropped
                case .aggregates: expired.aggregates += dropped
                case .sessions: expired.sessions += dropped
                case .batches: expired.batches += dropped
                }
                expired.transactions += 1
                await afterTransaction(expired)
                if dropped < transactionRows { break }
            }
        }
        return expired
    }
}
