import Dispatch
import Foundation
import NFLogSupport

/// The default ``EventStore``: one SQLite file (WAL), created if missing.
///
/// Two connections, each used only on its own serial queue: the writer stores batches one
/// transaction at a time (what SQLite allows anyway); the reader answers reports, lookups, the
/// app list and exports beside it (WAL lets readers run while the writer commits), so a report
/// over millions of events never holds up an upload. The async callers wait without blocking a
/// thread.
public final class SQLiteEventStore: EventStore, @unchecked Sendable {
    // @unchecked: `connection` and `statements` are touched only on `queue`; `reader` only on
    // `readQueue`.
    private let queue = DispatchQueue(label: "nflog-collector.store")
    private var connection: SQLiteConnection?
    private var statements: Statements?
    private let readQueue = DispatchQueue(label: "nflog-collector.store.read")
    private var reader: SQLiteConnection?
    public let path: String

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Parameter durableCommits: fsync each commit before it returns (`synchronous=FULL`), so a
    ///   batch acknowledged with 2xx survives a power cut or an OS crash: the SDK deletes its copy
    ///   on that answer. `false` (no fsync; a kill -9 still loses nothing) only where nothing is
    ///   meant to last, such as tests.
    public init(path: String, durableCommits: Bool = true) throws {
        self.path = path
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        try connection.enableWriteAheadLog(durableCommits: durableCommits)
        try SQLiteMigrator.migrate(connection, CollectorSchema.migrations)
        self.statements = try Statements(connection)
        self.connection = connection
        // After the writer made the file WAL and migrated it; read-only by construction.
        let reader = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        try reader.execute("PRAGMA query_only = 1")
        self.reader = reader
    }

    /// `PRAGMA synchronous` of the store's connection (2: FULL), for the test that holds the
    /// acknowledgement promise to it.
    func synchronousSetting() throws -> Int64? {
        try queue.sync { () throws -> Int64? in try connection?.scalarInt("PRAGMA synchronous") }
    }

    private struct Statements {
        let insertContext, findContext, upsertSession, insertEvent, upsertBatch, isNewBatch, upsertTotals, upsertName: SQLiteStatement
        let totals, names, prunes: SQLiteStatement
        let upsertPrune, insertReset, addDiagnostics: SQLiteStatement

        init(_ c: SQLiteConnection) throws(SQLiteError) {
            insertContext = try c.prepare("""
                INSERT INTO contexts (app, sdk_name, sdk_version, app_id, app_version, os_name, os_version, locale)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """)
            findContext = try c.prepare("""
                SELECT id FROM contexts WHERE app = ? AND sdk_name = ? AND sdk_version = ? AND app_id = ?
                AND app_version = ? AND os_name = ? AND os_version = ? AND locale = ?
                """)
            // A session's end time only grows: the latest suspension seen wins.
            upsertSession = try c.prepare("""
                INSERT INTO sessions (app, uuid, context_id, started_ms, ended_ms) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (app, uuid) DO UPDATE SET ended_ms = CASE
                    WHEN excluded.ended_ms IS NULL THEN sessions.ended_ms
                    WHEN sessions.ended_ms IS NULL THEN excluded.ended_ms
                    ELSE max(sessions.ended_ms, excluded.ended_ms) END
                """)
            insertEvent = try c.prepare("""
                INSERT INTO events (app, uuid, batch_id, session, context_id, name, kind, type, timestamp_ms,
                                    end_ms, duration_ms, parameters, end_parameters, received_ms, abandoned)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app, uuid) DO NOTHING
                """)
            isNewBatch = try c.prepare("SELECT count(*) FROM batches WHERE app = ? AND uuid = ?")
            upsertBatch = try c.prepare("""
                INSERT INTO batches (app, uuid, first_received_ms, last_received_ms, requests, accepted, duplicates)
                VALUES (?, ?, ?, ?, 1, ?, ?)
                ON CONFLICT (app, uuid) DO UPDATE SET last_received_ms = excluded.last_received_ms,
                    requests = requests + 1, accepted = accepted + excluded.accepted, duplicates = duplicates + excluded.duplicates
                """)
            upsertTotals = try c.prepare("""
                INSERT INTO totals (app, events, duplicates, batches, requests) VALUES (?, ?, ?, ?, 1)
                ON CONFLICT (app) DO UPDATE SET events = events + excluded.events, duplicates = duplicates + excluded.duplicates,
                    batches = batches + excluded.batches, requests = requests + 1
                """)
            upsertName = try c.prepare("""
                INSERT INTO name_counts (app, name, count) VALUES (?, ?, ?)
                ON CONFLICT (app, name) DO UPDATE SET count = count + excluded.count
                """)
            totals = try c.prepare("SELECT events, duplicates, batches, requests, abandoned, pruned, database_resets FROM totals WHERE app = ?")
            names = try c.prepare("SELECT name, count FROM name_counts WHERE app = ? ORDER BY name")
            prunes = try c.prepare("SELECT name, count FROM device_prunes WHERE app = ? ORDER BY name")
            upsertPrune = try c.prepare("""
                INSERT INTO device_prunes (app, name, count) VALUES (?, ?, ?)
                ON CONFLICT (app, name) DO UPDATE SET count = count + excluded.count
                """)
            insertReset = try c.prepare("INSERT INTO device_resets (app, batch_id, at_ms, reason) VALUES (?, ?, ?, ?)")
            addDiagnostics = try c.prepare("""
                UPDATE totals SET abandoned = abandoned + ?, pruned = pruned + ?, database_resets = database_resets + ? WHERE app = ?
                """)
        }
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection, Statements) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                guard let connection = self.connection, let statements = self.statements else {
                    return continuation.resume(throwing: SQLiteError(code: 21, message: "the store is closed"))
                }
                continuation.resume(with: Result { try body(connection, statements) })
            }
        }
    }

    private func onReadQueue<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            readQueue.async {
                guard let reader = self.reader else {
                    return continuation.resume(throwing: SQLiteError(code: 21, message: "the store is closed"))
                }
                continuation.resume(with: Result { try body(reader) })
            }
        }
    }

    public func store(_ batch: Batch, app: String, receivedAt: Int64) async throws -> StoreResult {
        try await onQueue { connection, s in
            try connection.transaction { () throws(SQLiteError) -> StoreResult in
                let context = try Self.contextRowID(batch, app: app, s)
                for session in batch.context.sessions {
                    try s.upsertSession.bind(app, at: 1)
                    try s.upsertSession.bind(session.id, at: 2)
                    try s.upsertSession.bind(context, at: 3)
                    try s.upsertSession.bind(session.startedAt, at: 4)
                    if let ended = session.endedAt { try s.upsertSession.bind(ended, at: 5) } else { try s.upsertSession.bindNull(at: 5) }
                    try s.upsertSession.run()
                }
                var accepted = 0
                var abandoned = 0
                var perName: [String: Int] = [:]
                let insert = s.insertEvent
                for event in batch.events {
                    try insert.bind(app, at: 1)
                    try insert.bind(event.id, at: 2)
                    try insert.bind(batch.id, at: 3)
                    try insert.bind(event.session, at: 4)
                    try insert.bind(context, at: 5)
                    try insert.bind(event.name, at: 6)
                    try insert.bind(event.kind.rawValue, at: 7)
                    try insert.bind(event.type, at: 8)
                    try insert.bind(event.timestamp, at: 9)
                    if let end = event.end { try insert.bind(end, at: 10) } else { try insert.bindNull(at: 10) }
                    if let duration = event.durationMilliseconds { try insert.bind(duration, at: 11) } else { try insert.bindNull(at: 11) }
                    if let parameters = event.parameters { try insert.bind(parameters, at: 12) } else { try insert.bindNull(at: 12) }
                    if let end = event.endParameters { try insert.bind(end, at: 13) } else { try insert.bindNull(at: 13) }
                    try insert.bind(receivedAt, at: 14)
                    try insert.bind(Int64(event.abandoned ? 1 : 0), at: 15)
                    try insert.run()
                    if insert.changes > 0 {
                        accepted += 1
                        if event.abandoned { abandoned += 1 }
                        perName[event.name, default: 0] += 1
                    }
                }
                let duplicates = batch.events.count - accepted

                try s.isNewBatch.bind(app, at: 1)
                try s.isNewBatch.bind(batch.id, at: 2)
                let isNew = try s.isNewBatch.collect { $0.int64(at: 0) }.first == 0
                try s.upsertBatch.bind(app, at: 1)
                try s.upsertBatch.bind(batch.id, at: 2)
                try s.upsertBatch.bind(receivedAt, at: 3)
                try s.upsertBatch.bind(receivedAt, at: 4)
                try s.upsertBatch.bind(Int64(accepted), at: 5)
                try s.upsertBatch.bind(Int64(duplicates), at: 6)
                try s.upsertBatch.run()

                try s.upsertTotals.bind(app, at: 1)
                try s.upsertTotals.bind(Int64(accepted), at: 2)
                try s.upsertTotals.bind(Int64(duplicates), at: 3)
                try s.upsertTotals.bind(Int64(isNew ? 1 : 0), at: 4)
                try s.upsertTotals.run()
                for (name, count) in perName {
                    try s.upsertName.bind(app, at: 1)
                    try s.upsertName.bind(name, at: 2)
                    try s.upsertName.bind(Int64(count), at: 3)
                    try s.upsertName.run()
                }
                // A batch's diagnostics count once: a retry of the same batch id adds nothing.
                var pruned: Int64 = 0
                var resets = 0
                if isNew, let diagnostics = batch.diagnostics {
                    for (name, count) in diagnostics.pruned {
                        try s.upsertPrune.bind(app, at: 1)
                        try s.upsertPrune.bind(name, at: 2)
                        try s.upsertPrune.bind(count, at: 3)
                        try s.upsertPrune.run()
                        pruned += count
                    }
                    for (at, reason) in diagnostics.databaseResets {
                        try s.insertReset.bind(app, at: 1)
                        try s.insertReset.bind(batch.id, at: 2)
                        try s.insertReset.bind(at, at: 3)
                        try s.insertReset.bind(reason, at: 4)
                        try s.insertReset.run()
                        resets += 1
                    }
                }
                try s.addDiagnostics.bind(Int64(abandoned), at: 1)
                try s.addDiagnostics.bind(pruned, at: 2)
                try s.addDiagnostics.bind(Int64(resets), at: 3)
                try s.addDiagnostics.bind(app, at: 4)
                try s.addDiagnostics.run()
                return StoreResult(accepted: accepted, duplicates: duplicates)
            }
        }
    }

    private static func contextRowID(_ batch: Batch, app: String, _ s: Statements) throws(SQLiteError) -> Int64 {
        let c = batch.context
        for statement in [s.insertContext, s.findContext] {
            try statement.bind(app, at: 1)
            try statement.bind(batch.sdkName, at: 2)
            try statement.bind(batch.sdkVersion, at: 3)
            try statement.bind(c.appID, at: 4)
            try statement.bind(c.appVersion, at: 5)
            try statement.bind(c.osName, at: 6)
            try statement.bind(c.osVersion, at: 7)
            try statement.bind(c.locale, at: 8)
        }
        try s.insertContext.run()
        guard let id = try s.findContext.collect({ $0.int64(at: 0) }).first else {
            throw SQLiteError(code: 1, message: "the context row vanished after insertion")
        }
        return id
    }

    public func stats(app: String) async throws -> CollectorStats {
        try await onQueue { _, s in
            try s.totals.bind(app, at: 1)
            let totals = try s.totals.collect { row in (0..<7).map { Int(row.int64(at: Int32($0))) } }.first ?? Array(repeating: 0, count: 7)
            try s.names.bind(app, at: 1)
            let names = try s.names.collect { ($0.text(at: 0) ?? "", Int($0.int64(at: 1))) }
            try s.prunes.bind(app, at: 1)
            let prunes = try s.prunes.collect { ($0.text(at: 0) ?? "", Int($0.int64(at: 1))) }
            return CollectorStats(app: app, eventsStored: totals[0], duplicatesDropped: totals[1],
                                  batches: totals[2], requests: totals[3],
                                  eventsByName: Dictionary(names, uniquingKeysWith: +),
                                  abandonedSpans: totals[4], prunedOnDevices: totals[5],
                                  prunedOnDevicesByName: Dictionary(prunes, uniquingKeysWith: +), databaseResets: totals[6])
        }
    }

    public func report(app: String) async throws -> AnalyticsReport {
        let stats = try await stats(app: app)
        return try await onReadQueue { connection in try Self.analyse(connection, app: app, stats: stats) }
    }

    static func analyse(_ c: SQLiteConnection, app: String, stats: CollectorStats) throws(SQLiteError) -> AnalyticsReport {
        let kinds = try c.prepare("SELECT kind, count(*) FROM events WHERE app = ?1 GROUP BY kind")
        try kinds.bind(app, at: 1)
        let byKind = Dictionary(try kinds.collect { ($0.text(at: 0) ?? "", Int($0.int64(at: 1))) }, uniquingKeysWith: +)

        // Use cases: spans of type "usecase". Abandoned: closed by the SDK, or ended with completed: false.
        let useCaseRows = try c.prepare("""
            SELECT name, duration_ms,
                   abandoned = 1 OR coalesce(json_extract(end_parameters, '$.completed'), 1) IN (0, 'false') AS given_up
            FROM events WHERE app = ?1 AND kind = 'span' AND type = 'usecase'
            """)
        try useCaseRows.bind(app, at: 1)
        var useCaseDurations: [String: (started: Int, abandoned: Int, completed: [Double])] = [:]
        for (name, duration, givenUp) in try useCaseRows.collect({ ($0.text(at: 0) ?? "", $0.double(at: 1), $0.int64(at: 2) != 0) }) {
            var entry = useCaseDurations[name] ?? (0, 0, [])
            entry.started += 1
            if givenUp { entry.abandoned += 1 } else { entry.completed.append(duration) }
            useCaseDurations[name] = entry
        }
        let useCases = useCaseDurations.mapValues { entry in
            AnalyticsReport.UseCase(started: entry.started, completed: entry.completed.count, abandoned: entry.abandoned,
                                    abandonmentRate: Double(entry.abandoned) / Double(entry.started),
                                    duration: DurationSummary(entry.completed))
        }

        let network = try c.prepare("SELECT duration_ms FROM events WHERE app = ?1 AND kind = 'span' AND type = 'network' AND abandoned = 0")
        try network.bind(app, at: 1)
        let roundTrips = try network.collect { $0.double(at: 0) }

        let sessions = try c.prepare("SELECT ended_ms - started_ms FROM sessions WHERE app = ?1 AND ended_ms IS NOT NULL")
        try sessions.bind(app, at: 1)
        let sessionDurations = try sessions.collect { Double($0.int64(at: 0)) }.filter { $0 >= 0 }

        return AnalyticsReport(app: app, stats: stats, pointEvents: byKind["point"] ?? 0, spanEvents: byKind["span"] ?? 0,
                               useCases: useCases, network: DurationSummary(roundTrips), sessions: DurationSummary(sessionDurations))
    }

    public func storedIDs(app: String, among ids: [UUID]) async throws -> Set<UUID> {
        try await onReadQueue { connection in
            let find = try connection.prepare("SELECT 1 FROM events WHERE app = ? AND uuid = ?")
            var found = Set<UUID>()
            for id in ids {
                try find.bind(app, at: 1)
                try find.bind(id, at: 2)
                if try !find.collect({ _ in true }).isEmpty { found.insert(id) }
            }
            return found
        }
    }

    public func apps() async throws -> [String] {
        try await onReadQueue { connection in
            try connection.prepare("SELECT app FROM totals ORDER BY app").collect { $0.text(at: 0) ?? "" }
        }
    }

    public func exportEvents(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws {
        try await onReadQueue { connection in try EventExporter.export(connection, app: app, line: line) }
    }

    public func probeWrite() async throws {
        try await onQueue { connection, _ in
            // A batch's worth of new pages (256 KiB), not one row that fits in a page already
            // there: a nearly full disk takes a row and refuses a batch.
            try connection.execute("""
                INSERT INTO write_probe (id, at_ms, padding) VALUES (1, \(Int64(Date().timeIntervalSince1970 * 1000)), randomblob(262144))
                ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms, padding = excluded.padding
                """)
        }
    }

    public func close() async {
        await withCheckedContinuation { continuation in
            queue.async {
                self.statements = nil
                self.connection = nil
                self.readQueue.async {
                    self.reader = nil
                    continuation.resume()
                }
            }
        }
    }
}
