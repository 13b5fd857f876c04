import CollectorTestSupport
import Foundation
import Logging
@testable import NFLogCollector
@_spi(NFLogShared) @testable import NFLogSupport
import PostgresNIO
import Synchronization
import Testing

/// Batches of every kind of event the rollups tell apart, from a seed: several hours, two app and
/// SDK versions, points and spans, use cases ended every way `completed` can be written, network
/// calls (some abandoned), web events with and without an origin, retried batches and a uuid twice
/// in one batch.
enum RollupFixtures {
    static let t0: Int64 = 1_750_000_000_000
    static let hour: Int64 = 3_600_000
    static let names = ["ui.tap", "screen.view", "form.signup", "flow.checkout", "api.get", "api.post", "render"]
    static let endings: [String?] = [nil, #"{"completed":true}"#, #"{"completed":false}"#, #"{"completed":0}"#,
                                     #"{"completed":"false"}"#, #"{"completed":"0"}"#, #"{"completed":1}"#, #"{"completed":0.0}"#,
                                     #"{"step":"c"}"#, #"{"completed":null}"#]

    /// How span durations are drawn.
    enum Distribution: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// 0 ms to minutes, log-uniform, and 5% exactly zero.
        case spread
        case uniform, bimodal, constant
        /// Heavy-tailed: most short, a few orders of magnitude longer.
        case pareto

        var testDescription: String { rawValue }

        func draw(_ random: inout SeededRandom) -> Double {
            switch self {
            case .spread:
                Int.random(in: 0..<20, using: &random) == 0
                    ? 0 : exp(Double.random(in: 0...12, using: &random)) * Double.random(in: 0.5...1, using: &random)
            case .uniform: Double.random(in: 0...2_000, using: &random)
            case .bimodal: Bool.random(using: &random) ? Double.random(in: 40...60, using: &random) : Double.random(in: 900...1_100, using: &random)
            case .constant: 250
            case .pareto: 10 / pow(Double.random(in: 0.0001...1, using: &random), 1.2)
            }
        }
    }

    static func batches(seed: UInt64, count: Int, durations: Distribution = .spread) -> [Batch] {
        var random = SeededRandom(seed: seed)
        var batches: [Batch] = []
        for index in 0..<count {
            let session = UUID()
            var events: [Batch.Event] = []
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                let at = t0 + Int64.random(in: 0..<(5 * hour), using: &random)
                let name = names.randomElement(using: &random) ?? "ui.tap"
                let web = Int.random(in: 0..<5, using: &random) == 0
                let origin = web && Bool.random(using: &random) ? ["https://shop.example", "https://help.example"].randomElement(using: &random) : nil
                let source: Batch.Source = web ? .web : .native
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    events.append(Batch.Event(id: UUID(), session: session, name: name, kind: .point, type: "event", timestamp: at,
                                              end: nil, durationMilliseconds: nil, parameters: #"{"n":1}"#, endParameters: nil,
                                              abandoned: false, transaction: nil, parentSpan: nil, source: source, origin: origin))
                default:
                    let type = ["usecase", "network", "render", "usecase", "network"].randomElement(using: &random) ?? "network"
                    let duration = durations.draw(&random)
                    events.append(Batch.Event(id: UUID(), session: session, name: name, kind: .span, type: type, timestamp: at,
                                              end: at + Int64(duration), durationMilliseconds: duration, parameters: nil,
                                              endParameters: endings.randomElement(using: &random) ?? nil,
                                              abandoned: Int.random(in: 0..<6, using: &random) == 0,
                                              transaction: nil, parentSpan: nil, source: source, origin: origin))
                }
            }
            // A uuid twice in one batch: the second is a duplicate.
            if index % 7 == 3, let first = events.first { events.append(first) }
            let version = index % 3 == 0 ? "2.0" : "1.9"
            batches.append(Batch(version: 1, id: UUID(), sentAt: t0, sdkName: "NFLogger", sdkVersion: index % 2 == 0 ? "0.9.0" : "1.0.0",
                                 context: Batch.Context(appID: "a", appVersion: version, osName: "iOS", osVersion: "18", locale: "en",
                                                        sessions: [Batch.Session(id: session, startedAt: t0, endedAt: nil)]),
                                 events: events, aggregates: [], diagnostics: nil))
        }
        return batches
    }

    /// Stores the batches, each twice in three (the second a retry, all duplicates).
    static func store(_ batches: [Batch], in store: any EventStore, app: String) async throws {
        for (index, batch) in batches.enumerated() {
            _ = try await store.store(batch, app: app, receivedAt: t0 + Int64(index))
            if index % 3 == 1 { _ = try await store.store(batch, app: app, receivedAt: t0 + Int64(index) + 1) }
        }
    }

    /// The rollup of the app's stored events, computed here from the store's export (the raw
    /// events as a third party reads them, ``RollupReportTests/exported(_:app:)``), with this
    /// test's own reading of the rules: a use case is given up when abandoned or ended with
    /// `completed` false, 0 or "false"; a duration is measured for a completed use case or a
    /// network span not abandoned.
    static func expected(_ store: any EventStore, app: String) async throws -> HourlyRollup {
        var rollup = HourlyRollup()
        for event in try await RollupReportTests.exported(store, app: app) {
            // Given up: use cases only (the export's reading applies to every span).
            let givenUp = event.kind == "span" && event.type == "usecase" && event.givenUp
            let measured = event.kind == "span" && ((event.type == "usecase" && !givenUp) || (event.type == "network" && !event.abandoned))
            let hour = event.timestamp / Self.hour
            rollup.add(HourlyRollup.EventKey(hour: hour, appVersion: event.appVersion, sdkName: event.sdkName, sdkVersion: event.sdkVersion,
                                             name: event.name, kind: event.kind, type: event.type, source: event.web ? "web" : "native"),
                       HourlyRollup.EventCounts(events: 1, abandoned: event.abandoned ? 1 : 0, givenUp: givenUp ? 1 : 0,
                                                measured: measured ? 1 : 0,
                                                durationMicros: measured ? Int64((event.duration * 1_000).rounded()) : 0))
            if measured {
                rollup.add(HourlyRollup.DurationKey(hour: hour, appVersion: event.appVersion, name: event.name, type: event.type,
                                                    bucket: DurationBucket.key(event.duration)), count: 1)
            }
            if event.web, let origin = event.origin {
                rollup.add(HourlyRollup.OriginKey(hour: hour, appVersion: event.appVersion, origin: origin), events: 1)
            }
        }
        return rollup
    }

    /// The keys whose values differ (at most five, for a readable failure): empty when equal.
    static func differences<Key: Hashable, Value: Equatable>(_ stored: [Key: Value], _ expected: [Key: Value]) -> [String] {
        Set(stored.keys).union(expected.keys).filter { stored[$0] != expected[$0] }.prefix(5).map { key in
            "\(key): stored \(stored[key].map { "\($0)" } ?? "nothing"), expected \(expected[key].map { "\($0)" } ?? "nothing")"
        }
    }

    /// Whether `stored` holds exactly `expected`'s rows; the first differences recorded if not.
    static func expectEqual(_ stored: HourlyRollup, _ expected: HourlyRollup, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(differences(stored.events, expected.events) == [], sourceLocation: sourceLocation)
        #expect(differences(stored.durations, expected.durations) == [], sourceLocation: sourceLocation)
        #expect(differences(stored.origins, expected.origins) == [], sourceLocation: sourceLocation)
    }

    static func rollup(_ store: any EventStore, app: String) async throws -> HourlyRollup {
        switch store {
        case let sqlite as SQLiteEventStore: return try await sqlite.hourlyRollup(app: app)
        case let postgres as PostgresEventStore: return try await postgres.hourlyRollup(app: app)
        default: throw CancellationError()
        }
    }
}

@Suite("Hourly rollups: written with each batch, equal to the events they cover")
struct RollupTests {
    typealias F = RollupFixtures

    @Test("Every rollup row (counts, given-up use cases, duration buckets and sums, origins) equals the stored events it covers; retries and duplicates add nothing",
          arguments: StoreKind.all)
    func rollupsEqualTheEvents(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await F.store(F.batches(seed: 11, count: 60), in: store, app: "shop")
            try await F.store(F.batches(seed: 12, count: 5), in: store, app: "other")
            let expected = try await F.expected(store, app: "shop")
            #expect(expected.events.count > 100 && expected.durations.count > 100 && !expected.origins.isEmpty)
            #expect(expected.events.values.contains { $0.givenUp > 0 } && expected.events.values.contains { $0.abandoned > 0 })
            F.expectEqual(try await F.rollup(store, app: "shop"), expected)
            F.expectEqual(try await F.rollup(store, app: "other"), try await F.expected(store, app: "other"))
            if let postgres = store as? PostgresEventStore {
                // Folded into the keyed rows: the same sums.
                while try await !postgres.foldCounts() {}
                F.expectEqual(try await F.rollup(store, app: "shop"), expected)
            }
        }
    }

    @Test("A store from before the rollups gets them at its first start: every event it kept is added once, and uploads after it by their own batches",
          arguments: StoreKind.all)
    func upgradeBackfills(kind: StoreKind) async throws {
        let before = F.batches(seed: 21, count: 40)
        let after = F.batches(seed: 22, count: 10)
        try await Self.withUpgradedStore(kind, storedBefore: before) { store in
            // Uploads after the migration: rolled up by their own batches, not again by the
            // backfill (whose last row id was fixed by the migration).
            try await F.store(after, in: store, app: "shop")
            switch store {
            case let sqlite as SQLiteEventStore: await sqlite.rollupsBackfilled()
            case let postgres as PostgresEventStore: await postgres.rollupsBackfilled()
            default: break
            }
            F.expectEqual(try await F.rollup(store, app: "shop"), try await F.expected(store, app: "shop"))
        }
    }

    @Test("Rollup retention drops every app's hours before the cutoff and keeps the later ones exactly; the report then counts the kept hours; a second run drops nothing",
          arguments: StoreKind.all)
    func retentionDropsOldHours(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await F.store(F.batches(seed: 41, count: 30), in: store, app: "shop")
            try await F.store(F.batches(seed: 42, count: 8), in: store, app: "other")
            let cut = F.t0 / F.hour + 2
            /// The expected rows of the hours from `cut` on.
            func kept(_ app: String) async throws -> HourlyRollup {
                let all = try await F.expected(store, app: app)
                var kept = HourlyRollup()
                for (key, counts) in all.events where key.hour >= cut { kept.add(key, counts) }
                for (key, count) in all.durations where key.hour >= cut { kept.add(key, count: count) }
                for (key, events) in all.origins where key.hour >= cut { kept.add(key, events: events) }
                return kept
            }
            let (shop, other) = (try await kept("shop"), try await kept("other"))
            #expect(shop.events.count > 20 && shop.durations.count > 20)
            #expect(try await F.rollup(store, app: "shop").events.keys.contains { $0.hour < cut })

            #expect(try await store.dropRollups(hoursBefore: cut) > 0)
            F.expectEqual(try await F.rollup(store, app: "shop"), shop)
            F.expectEqual(try await F.rollup(store, app: "other"), other)
            let report = try await store.report(app: "shop")
            #expect(Int64(report.pointEvents + report.spanEvents) == shop.events.values.reduce(0) { $0 + $1.events })
            #expect(try await store.dropRollups(hoursBefore: cut) == 0)
        }
    }

    @Test("The backfill resumes where it stopped: steps of a few events, the store closed and opened in between, add each event once")
    func backfillResumes() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-rollup-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try await Self.makeOldSQLiteStore(path, storing: F.batches(seed: 31, count: 20))
        // Three steps of 7 events by hand, as a collector stopped after them would leave it.
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        try SQLiteMigrator.migrate(connection, CollectorSchema.migrations)
        let statements = try SQLiteRollupStatements(connection)
        for _ in 0..<3 {
            let progress = try #require(try SQLiteRollupBackfill.step(connection, statements, limit: 7))
            #expect(progress.added == 7)
        }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        await store.rollupsBackfilled()
        F.expectEqual(try await store.hourlyRollup(app: "shop"), try await F.expected(store, app: "shop"))
        #expect(try SQLiteRollupBackfill.step(connection, statements) == nil)
        await store.close()
    }

    @Test("Duration buckets keep the durations' order and each one within 1%")
    func bucketsAreWithinOnePercent() {
        var random = SeededRandom(seed: 5)
        var last: (Double, Int64) = (0, DurationBucket.key(0))
        #expect(DurationBucket.key(0) == 0 && DurationBucket.value(0) == 0)
        for duration in ((0..<5_000).map { _ in exp(Double.random(in: -5...17, using: &random)) }).sorted() {
            let key = DurationBucket.key(duration)
            #expect(key >= last.1)
            #expect(abs(DurationBucket.value(key) - duration) <= 0.01 * duration)
            last = (duration, key)
        }
    }

    // MARK: - Stores from before the rollups

    /// Stores `before` in a store at `schema`, opens it again now and stores `after` while its
    /// backfill runs, then runs `check` once the backfill is done.
    static func upgrade(_ kind: StoreKind, from schema: OldSchema, before: [Batch], after: [Batch],
                        check: (any EventStore) async throws -> Void) async throws {
        try await withUpgradedStore(kind, from: schema, storedBefore: before) { store in
            for (index, batch) in after.enumerated() {
                _ = try await store.store(batch, app: "shop", receivedAt: 1_750_000_010_000 + Int64(index))
            }
            switch store {
            case let sqlite as SQLiteEventStore: await sqlite.rollupsBackfilled()
            case let postgres as PostgresEventStore: await postgres.rollupsBackfilled()
            default: break
            }
            try await check(store)
        }
    }

    /// As ``upgrade(_:from:before:after:check:)`` on SQLite, the backfill in steps of five row ids
    /// (or sessions): the store opens with most of it left, and `after` is stored between its steps.
    static func upgradeInSteps(from schema: OldSchema, before: [Batch], after: [Batch],
                               check: (SQLiteEventStore) async throws -> Void) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-rollup-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try await makeOldSQLiteStore(path, schema, storing: before)
        let store = try SQLiteEventStore(path: path, durableCommits: false, readTimeLimit: .seconds(30),
                                         logger: Logger(label: "test"), backfillStep: 5, compacts: false)
        let reader = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        #expect(try SQLiteRollupBackfill.remaining(reader) ?? 0 > 0)
        for (index, batch) in after.enumerated() {
            _ = try await store.store(batch, app: "shop", receivedAt: 1_750_000_090_000 + Int64(index))
        }
        await store.rollupsBackfilled()
        #expect(try SQLiteRollupBackfill.remaining(reader) == nil)
        do { try await check(store) } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// A schema before today's, that an older collector left.
    enum OldSchema: Sendable {
        /// Before any rollup (SQLite 10, PostgreSQL 6).
        case beforeRollups
        /// With the hourly rollups, before the funnels' and sessions' (SQLite 11, PostgreSQL 7).
        case beforeFunnels
    }

    /// Drops migrations 13 and 14's daily and past rollups (SQLite): their tables, their triggers,
    /// `rollup_compaction`.
    static let dropDailyRollups = RollupDays.tables.map {
        "DROP TABLE \($0.past); DROP TRIGGER \($0.hours)_insert_to_days; DROP TRIGGER \($0.hours)_update_to_days; DROP TRIGGER \($0.hours)_delete_to_days; DROP TABLE \($0.days);"
    }.joined(separator: " ") + " DROP TABLE rollup_compaction;"

    /// Stores `batches` with today's code, then takes the store back to `schema` (the later
    /// tables dropped, the schema version lowered), as an older collector left it.
    static func makeOldSQLiteStore(_ path: String, _ schema: OldSchema = .beforeRollups, storing batches: [Batch]) async throws {
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        try await F.store(batches, in: store, app: "shop")
        await store.close()
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        try connection.execute(dropDailyRollups)
        switch schema {
        case .beforeRollups:
            try connection.execute("""
                DROP TABLE event_hours; DROP TABLE duration_hours; DROP TABLE origin_hours; DROP TABLE rollup_backfill;
                DROP TABLE funnel_hours; DROP TABLE session_hours; DROP INDEX sessions_started; PRAGMA user_version = 10;
                """)
        case .beforeFunnels:
            try connection.execute("""
                DROP TABLE funnel_hours; DROP TABLE session_hours; DROP INDEX sessions_started; ALTER TABLE rollup_backfill DROP COLUMN next_run;
                ALTER TABLE rollup_backfill DROP COLUMN last_run; ALTER TABLE rollup_backfill DROP COLUMN runs_received_before_ms;
                ALTER TABLE rollup_backfill DROP COLUMN sessions_after_app; ALTER TABLE rollup_backfill DROP COLUMN sessions_after_uuid;
                ALTER TABLE rollup_backfill DROP COLUMN sessions_done; PRAGMA user_version = 11;
                """)
        }
    }

    /// Runs `body` with a store of `kind` that was made at `schema`, holding `storedBefore`
    /// (stored with today's code, then taken back to the older schema), and opened again now.
    static func withUpgradedStore(_ kind: StoreKind, from schema: OldSchema = .beforeRollups, storedBefore: [Batch],
                                  _ body: (any EventStore) async throws -> Void) async throws {
        switch kind {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-rollup-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            try await makeOldSQLiteStore(path, schema, storing: storedBefore)
            let store = try SQLiteEventStore(path: path, durableCommits: false)
            do { try await body(store) } catch {
                await store.close()
                throw error
            }
            await store.close()
        case .postgres:
            try await TestDatabase.with { url in
                let old = try await PostgresEventStore(url: url, poolSize: 2)
                try await F.store(storedBefore, in: old, app: "shop")
                await old.close()
                try await TestDatabase.withClient(url) { client in
                    let logger = Logger(label: "test")
                    // Schema 10's and 9's past and daily rollups first (their views read the hours' deltas).
                    for table in RollupDays.tables {
                        try await client.query(PostgresQuery(unsafeSQL: "DROP VIEW \(table.past)_now"), logger: logger)
                        try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table.past)"), logger: logger)
                        try await client.query(PostgresQuery(unsafeSQL: "DROP VIEW \(table.days)_now"), logger: logger)
                        try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table.days)"), logger: logger)
                    }
                    try await client.query("DROP TABLE rollup_compaction", logger: logger)
                    // And schema 11's indexes.
                    try await client.query("DROP INDEX events_children", logger: logger)
                    try await client.query("DROP INDEX events_span_ids", logger: logger)
                    var tables = ["funnel_hour", "session_hour"]
                    if case .beforeRollups = schema { tables += ["event_hour", "duration_hour", "origin_hour"] }
                    for table in tables {
                        try await client.query(PostgresQuery(unsafeSQL: "DROP VIEW \(table)s_now"), logger: logger)
                        try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)s, \(table)_deltas"), logger: logger)
                    }
                    try await client.query("DROP INDEX sessions_started", logger: logger)
                    switch schema {
                    case .beforeRollups:
                        try await client.query("DROP TABLE rollup_backfill", logger: logger)
                        try await client.query("DELETE FROM schema_migrations WHERE version >= 7", logger: logger)
                    case .beforeFunnels:
                        try await client.query("""
                            ALTER TABLE rollup_backfill DROP COLUMN next_run, DROP COLUMN last_run, DROP COLUMN runs_received_before_ms,
                                DROP COLUMN sessions_after, DROP COLUMN sessions_done
                            """, logger: logger)
                        try await client.query("DELETE FROM schema_migrations WHERE version >= 8", logger: logger)
                    }
                }
                let store = try await PostgresEventStore(url: url, poolSize: 4)
                do { try await body(store) } catch {
                    await store.close()
                    throw error
                }
                await store.close()
            }
        }
    }
}

@Suite("The report over the rollups: exact counts, percentiles within 1%")
struct RollupReportTests {
    typealias F = RollupFixtures

    /// The filters tried: none, whole hours, parts of hours at either end, one app version, a
    /// range within one hour, and a range holding nothing.
    static let filters: [ReportFilter] = [
        ReportFilter(),
        ReportFilter(from: F.t0 / F.hour * F.hour + F.hour, to: F.t0 / F.hour * F.hour + 3 * F.hour),
        ReportFilter(from: F.t0 + 1_234_567, to: F.t0 + 3 * F.hour + 7),
        ReportFilter(from: F.t0 + 2 * F.hour + 5),
        ReportFilter(to: F.t0 + 90 * 60_000),
        ReportFilter(appVersion: "2.0"),
        ReportFilter(from: F.t0 + F.hour + 17, to: F.t0 + F.hour + 1_800_000, appVersion: "1.9"),
        ReportFilter(from: F.t0 + 10 * F.hour),
    ]

    @Test("Every count equals the events' own, every percentile is within 1% of the exact nearest rank and every mean within a microsecond, over several distributions and filters",
          arguments: StoreKind.all, F.Distribution.allCases)
    func matchesTheEvents(kind: StoreKind, durations: F.Distribution) async throws {
        try await kind.withStore { store in
            try await F.store(F.batches(seed: 41, count: 80, durations: durations), in: store, app: "shop")
            let events = try await Self.exported(store, app: "shop")
            for filter in Self.filters {
                let report = try await store.report(app: "shop", filter: filter)
                let selected = events.filter { event in
                    (filter.from.map { event.timestamp >= $0 } ?? true) && (filter.to.map { event.timestamp < $0 } ?? true)
                        && (filter.appVersion.map { event.appVersion == $0 } ?? true)
                }
                let label = "\(filter)"
                if filter.selectsEvents {
                    #expect(report.eventsStored == selected.count, "\(label)")
                    let byName: [String: Int] = Dictionary(selected.map { ($0.name, 1) }, uniquingKeysWith: +)
                    #expect(report.eventsByName == byName, "\(label)")
                    let abandoned = selected.filter(\.abandoned).count
                    #expect(report.abandonedSpans == abandoned, "\(label)")
                }
                let spans: [Event] = selected.filter { $0.kind == "span" }
                let points = selected.count - spans.count
                #expect(report.spanEvents == spans.count && report.pointEvents == points, "\(label)")
                let web = selected.filter(\.web).count
                #expect(report.eventsBySource.web == web, "\(label)")
                let origins = Set(selected.compactMap(\.origin)).count
                #expect(report.webOrigins == origins, "\(label)")
                let reportedVersions: [String: Int] = Dictionary(report.versions.app.map { ($0.version, $0.events) }, uniquingKeysWith: +)
                let versions: [String: Int] = Dictionary(selected.map { ($0.appVersion, 1) }, uniquingKeysWith: +)
                #expect(reportedVersions == versions, "\(label)")
                let sdkEvents = report.versions.sdk.map(\.events).reduce(0, +)
                #expect(sdkEvents == selected.count, "\(label)")
                let useCases: [Event] = spans.filter { $0.type == "usecase" }
                #expect(Set(report.useCases.keys) == Set(useCases.map(\.name)), "\(label)")
                for (name, runs) in Dictionary(grouping: useCases, by: \.name) {
                    let entry = try #require(report.useCases[name])
                    #expect(entry.started == runs.count && entry.abandoned == runs.filter(\.givenUp).count, "\(label) \(name)")
                    let exact = DurationSummary(runs.filter { !$0.givenUp }.map(\.duration))
                    #expect(entry.duration.matches(exact), "\(label) \(name): \(entry.duration) against \(exact)")
                }
                let roundTripDurations: [Double] = spans.filter { $0.type == "network" && !$0.abandoned }.map(\.duration)
                let roundTrips = DurationSummary(roundTripDurations)
                #expect(report.network.matches(roundTrips), "\(label): \(report.network) against \(roundTrips)")
            }
        }
    }

    /// What the test needs of each stored event, read from the export.
    struct Event {
        let timestamp: Int64, name: String, kind: String, type: String, appVersion: String, sdkName: String, sdkVersion: String
        let origin: String?
        let web: Bool, abandoned: Bool, givenUp: Bool, duration: Double
    }

    static func exported(_ store: any EventStore, app: String) async throws -> [Event] {
        let lines = Mutex<[[UInt8]]>([])
        try await store.exportEvents(app: app) { line in lines.withLock { $0.append(line) } }
        return try lines.withLock { $0 }.map { line in
            guard case .object(let event) = try JSONParser.parse(line), case .object(let context)? = event["context"],
                  case .string(let name)? = event["name"], case .string(let kind)? = event["kind"], case .string(let type)? = event["type"],
                  case .number(let time)? = event["timestamp"], let timestamp = time.integer,
                  case .string(let appVersion)? = context["app_version"], case .string(let sdkName)? = context["sdk_name"],
                  case .string(let sdkVersion)? = context["sdk_version"] else { throw CancellationError() }
            var origin: String?
            if case .string(let value)? = event["origin"] { origin = value }
            var duration = 0.0
            if case .number(let value)? = event["duration_ms"] { duration = value.double }
            let abandoned = event["abandoned"] == .bool(true)
            var notCompleted = false
            if case .object(let end)? = event["end_parameters"] {
                switch end["completed"] {
                case .bool(false)?, .string("false")?: notCompleted = true
                case .number(let number)?: notCompleted = number.double == 0
                default: break
                }
            }
            return Event(timestamp: timestamp, name: name, kind: kind, type: type, appVersion: appVersion, sdkName: sdkName,
                         sdkVersion: sdkVersion, origin: origin,
                         web: event["source"] == .string("web"), abandoned: abandoned, givenUp: abandoned || notCompleted,
                         duration: duration)
        }
    }
}
