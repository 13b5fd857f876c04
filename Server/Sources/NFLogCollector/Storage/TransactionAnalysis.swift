@_spi(NFLogShared) import NFLogSupport

/// The report's `server` split of each use case (docs/PROTOCOL.md, "Transactions"): its completed
/// transactions' time in the app, on the network and on the server, from the spans the app and its
/// backend logged under one transaction id.
///
/// A *client call* is a span of the transaction logged by the app instance that logged the
/// transaction's own span (the same context); its *server span* is the longest span whose
/// `parent_span` is the call's span id and that was logged elsewhere (another context: the
/// backend). Requiring the two contexts keeps the backend's nested spans, whose parents are the
/// backend's own spans, from counting as calls. Everything joins within one app.
///
/// Memory does not grow with the transactions: SQL computes one row per client call, then one
/// per transaction, and hands the three parts back in (name, part, value) order with each
/// group's size, so each part is summarised as it streams past (``SortedDurations``), as the
/// report's other durations are.
enum TransactionAnalysis {
    /// The three parts, in the order the query numbers them.
    private enum Part: Int64 {
        case client = 0, network, server
    }

    /// The query: one row per (name, part, duration) in order, with its group's size. The calls
    /// come first and their use case is looked up by uuid (CROSS JOIN fixes that order): with a
    /// range or a version SQLite otherwise walks every use case span of the app.
    static func sql(_ selection: SQLiteReportSelection) -> String {
        """
        WITH calls AS (
            SELECT c.transaction_id AS txn, c.context_id AS context, c.duration_ms AS client_ms, max(s.duration_ms) AS server_ms
            FROM events s INDEXED BY events_transactions
            JOIN events c INDEXED BY events_transactions
                ON c.app = ?1 AND c.transaction_id = s.transaction_id AND c.span_id = s.parent_span AND c.span_id IS NOT NULL
            WHERE s.app = ?1 AND s.span_id IS NOT NULL AND s.parent_span IS NOT NULL AND s.context_id != c.context_id
            GROUP BY c.id
        ),
        transactions AS (
            SELECT u.name AS name, max(u.duration_ms - sum(calls.client_ms), 0) AS client,
                   sum(max(calls.client_ms - calls.server_ms, 0)) AS network, sum(calls.server_ms) AS server
            FROM calls CROSS JOIN events u ON u.app = ?1 AND u.uuid = calls.txn
            WHERE u.kind = 'span' AND u.type = 'usecase' AND u.given_up = 0 AND u.context_id = calls.context\(selection.events("u"))
            GROUP BY calls.txn
        ),
        parts AS (
            SELECT name, 0 AS part, client AS ms FROM transactions
            UNION ALL SELECT name, 1, network FROM transactions
            UNION ALL SELECT name, 2, server FROM transactions
        )
        SELECT name, part, ms, count(*) OVER (PARTITION BY name, part) FROM parts ORDER BY name, part, ms
        """
    }

    /// Reads in the caller's transaction (the report's snapshot); only the names in `names` are
    /// computed (the listed use cases), over the transactions whose use case `selection` selects,
    /// and only those with a split are in the result.
    static func splits(_ c: SQLiteConnection, app: String, names: Set<String>,
                       selection: SQLiteReportSelection) throws(SQLiteError) -> [String: ServerSplit] {
        guard !names.isEmpty else { return [:] }
        let rows = try c.prepare(sql(selection))
        try selection.bind(rows, app: app)
        defer { rows.reset() }
        var parts: [String: [Part: SortedDurations]] = [:]
        while try rows.step() {
            // Names past the listed ones are skipped, not kept.
            guard let name = rows.text(at: 0), names.contains(name), let part = Part(rawValue: rows.int64(at: 1)) else { continue }
            // The first row of a (name, part) group carries its size, which fixes the ranks.
            parts[name, default: [:]][part, default: SortedDurations(count: Int(rows.int64(at: 3)))].add(rows.double(at: 2))
        }
        var splits: [String: ServerSplit] = [:]
        for (name, summaries) in parts {
            guard let client = summaries[.client]?.summary, let network = summaries[.network]?.summary,
                  let server = summaries[.server]?.summary else { continue }
            splits[name] = ServerSplit(transactions: client.count, client: client, network: network, server: server)
        }
        return splits
    }
}
