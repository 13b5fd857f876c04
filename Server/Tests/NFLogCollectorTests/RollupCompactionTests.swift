import CollectorTestSupport
import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport
import PostgresNIO
import Testing
@testable import NFLogCollector

/// The daily rollups (``RollupDays``): how a range is split between hour and day rows, and, on
/// each store, that a store whose past days are compacted reports exactly what a SQLite store
/// without them does, through late events, funnel steps and session listings for compacted days
/// (on PostgreSQL also before and after their fold), and rollup retention.
@Suite("Daily rollups")
struct RollupCompactionTests {
    typealias F = FunnelFixtures
    static let day: Int64 = 24
    static let dayMilliseconds: Int64 = 86_400_000
    /// 2025-06-14T00:00Z, the first day of the data (in hours since 1970: a day's start).
    static let firstDay: Int64 = 1_749_859_200_000

    @Test("A range's whole hours split into hours before the first whole day, compacted days (or all of them at once), and hours after")
    func segments() {
        func split(_ from: Int64?, _ to: Int64?, _ compacted: Int64, earliest: Int64? = nil) -> [String] {
            RollupDays.segments(RollupRange.Hours(from: from, to: to), compactedBefore: compacted, earliest: earliest).map {
                "\($0.level.rawValue) \($0.hours.from.map(String.init) ?? "-") \($0.hours.to.map(String.init) ?? "-")"
            }
        }
        #expect(split(nil, nil, 0) == ["hours - -"])
        #expect(split(nil, nil, 48) == ["past - -", "hours 48 -"])
        #expect(split(nil, 48, 48) == ["past - -"])
        #expect(split(nil, 47, 48) == ["days - 24", "hours 24 47"])
        // From the app's earliest hour or before it: every compacted day, as with no start.
        #expect(split(7, 100, 72, earliest: 7) == ["past - -", "hours 72 100"])
        #expect(split(5, 72, 72, earliest: 7) == ["past - -"])
        #expect(split(8, 100, 72, earliest: 7) == ["hours 8 24", "days 24 72", "hours 72 100"])
        #expect(split(5, 100, 72, earliest: nil) == ["hours 5 24", "days 24 72", "hours 72 100"])
        #expect(RollupDays.mayReadPast(RollupRange.Hours(from: 5, to: 100), compactedBefore: 72))
        #expect(!RollupDays.mayReadPast(RollupRange.Hours(from: 5, to: 71), compactedBefore: 72))
        #expect(!RollupDays.mayReadPast(RollupRange.Hours(from: 72, to: nil), compactedBefore: 72))
        #expect(!RollupDays.mayReadPast(RollupRange.Hours(from: nil, to: nil), compactedBefore: 72))
        #expect(split(5, 100, 72) == ["hours 5 24", "days 24 72", "hours 72 100"])
        #expect(split(24, 48, 72) == ["days 24 48"])
        #expect(split(5, 30, 72) == ["hours 5 30"])
        #expect(split(nil, 30, 72) == ["days - 24", "hours 24 30"])
        #expect(split(nil, 100, 72) == ["past - -", "hours 72 100"])
        #expect(split(100, nil, 72) == ["hours 100 -"])
        #expect(split(48, nil, 72) == ["days 48 72", "hours 72 -"])
        #expect(split(48, nil, 72, earliest: 50) == ["past - -", "hours 72 -"])
        #expect(RollupDays.start(ofHour: 47) == 24 && RollupDays.start(ofHour: 48) == 48 && RollupDays.start(ofHour: 0) == 0)
    }

    /// Batches over five days (several hours each, both app versions): funnel runs with steps,
    /// round trips, web points with an origin, sessions; and `late` ones for the same days: new
    /// events, steps of runs already stored, and the sessions listed again with later ends.
    static func batches(seed: UInt64) throws -> (early: [Batch], late: [Batch]) {
        var random = SeededRandom(seed: seed)
        var early: [String] = []
        var late: [String] = []
        for day in 0..<5 {
            for hour in [0, 5, 11, 23] {
                let at = firstDay + Int64(day) * dayMilliseconds + Int64(hour) * F.hour + Int64.random(in: 0..<3_000_000, using: &random)
                let version = ["2.0", "2.1.0"].randomElement(using: &random) ?? "2.0"
                let session = UUID().uuidString.lowercased()
                let runs = (0..<3).map { _ in F.Run() }
                var events: [String] = []
                var later: [String] = []
                for (index, run) in runs.enumerated() {
                    let outcome: F.Outcome = [.completed, .failed, .abandoned][index]
                    events.append(F.run(run, "checkout", at: at + Int64(index), duration: Double.random(in: 1...5_000, using: &random),
                                        outcome: outcome, session: session))
                    events.append(F.step("checkout.cart", of: run, at: at + 10, session: session))
                    // Steps that come later, in another batch: the run's funnel changes.
                    later.append(F.step(["checkout.address", "checkout.pay"].randomElement(using: &random) ?? "checkout.pay", of: run,
                                        at: at + 20, session: session))
                }
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    events.append(SeriesFixtures.roundTrip(at: at + 30, ms: Double.random(in: 0.5...900, using: &random)))
                    later.append(SeriesFixtures.roundTrip(at: at + 40, ms: Double.random(in: 0.5...900, using: &random)))
                }
                events.append(SeriesFixtures.point(at: at + 50, web: true))
                later.append(SeriesFixtures.point(at: at + 60, web: Bool.random(using: &random)))
                // The round trips and points in the batch's own session.
                events = events.map { $0.replacingOccurrences(of: SeriesFixtures.session, with: session) }
                later = later.map { $0.replacingOccurrences(of: SeriesFixtures.session, with: session) }
                let started = at - 1_000
                early.append(F.batch(version: version, sessions: [(session, started, started + Int64.random(in: 1...60_000, using: &random))],
                                     events: events))
                late.append(F.batch(version: version, sessions: [(session, started, started + Int64.random(in: 60_000...9_000_000, using: &random))],
                                    events: later))
            }
        }
        let decoder = BatchDecoder()
        return (try early.map { try decoder.decode(Array($0.utf8)) }, try late.map { try decoder.decode(Array($0.utf8)) })
    }

    /// Filters of whole days, of parts of hours and days, across the compacted days' end, by
    /// version, from before the first event.
    static let filters: [ReportFilter] = {
        let hour = F.hour
        let d = dayMilliseconds
        return [
            ReportFilter(),
            ReportFilter(from: firstDay + d, to: firstDay + 3 * d),
            ReportFilter(from: firstDay + d + 5 * hour, to: firstDay + 4 * d + 7),
            ReportFilter(from: firstDay + 2 * d - 1),
            ReportFilter(to: firstDay + 3 * d + 11 * hour + 1_234),
            ReportFilter(appVersion: "2.0"),
            ReportFilter(from: firstDay + 12 * hour, to: firstDay + 3 * d + 12 * hour, appVersion: "2.1.0"),
            ReportFilter(from: firstDay + 5 * hour, to: firstDay + 5 * hour + 60_000),
            // From before the first event: the compacted days from their past rows.
            ReportFilter(from: firstDay - 3 * hour + 17, to: firstDay + 4 * d + 2 * hour),
        ]
    }()

    /// The store whose days a test compacts, of either kind, with what the test does to it
    /// beyond ``EventStore``.
    struct Compacted {
        let store: any EventStore
        let compact: (_ before: Int64) async throws -> Int
        /// The first column of the first row of a query (the SQL the tests use runs on both).
        let count: (_ sql: String) async throws -> Int64
        /// On PostgreSQL, folds the deltas into the keyed rows (which the compactor sums); on
        /// SQLite, nothing.
        let fold: () async throws -> Void
    }

    /// Runs `body` with a store of `kind` that neither compacts nor (PostgreSQL) folds by itself,
    /// and a plain SQLite store (which never compacts), both empty; closes and removes both.
    static func withStores(_ kind: StoreKind, _ body: (_ compacted: Compacted, _ plain: SQLiteEventStore) async throws -> Void) async throws {
        // The plain store's file, and the compacted one's on SQLite.
        let paths = [StoreFixtures.temporaryPath(), StoreFixtures.temporaryPath()]
        defer { for path in paths { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } } }
        let plain = try uncompacting(paths[0])
        var database: TestDatabase?
        let compacted: Compacted
        do {
            switch kind {
            case .sqlite:
                compacted = try sqlite(paths[1])
            case .postgres:
                let made = try await TestDatabase.create()
                database = made
                compacted = try await postgres(made.url)
            }
        } catch {
            await plain.close()
            try? await database?.drop()
            throw error
        }
        do {
            try await body(compacted, plain)
        } catch {
            await compacted.store.close()
            await plain.close()
            try? await database?.drop()
            throw error
        }
        await compacted.store.close()
        await plain.close()
        try await database?.drop()
    }

    /// A SQLite store at `path` that compacts only when told to.
    private static func uncompacting(_ path: String) throws -> SQLiteEventStore {
        try SQLiteEventStore(path: path, durableCommits: false, readTimeLimit: .seconds(30), logger: Logger(label: "test"),
                             backfillStep: SQLiteRollupBackfill.stepSize, compacts: false)
    }

    private static func sqlite(_ path: String) throws -> Compacted {
        let store = try uncompacting(path)
        return Compacted(store: store, compact: { try await store.compactRollups(before: $0) }, count: { sql in
            try await store.onWriter { c in try c.prepare(sql).collect { $0.int64(at: 0) }.first ?? -1 }
        }, fold: {})
    }

    private static func postgres(_ url: String) async throws -> Compacted {
        let store = try await PostgresEventStore(url: url, poolSize: 4, passwordFile: nil, readTimeLimit: .seconds(30), readingOnly: false,
                                                 logger: Logger(label: "test"), folds: false)
        return Compacted(store: store, compact: { try await store.compactRollups(before: $0) }, count: { sql in
            try await store.read { c in
                for try await value in try await c.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test")).decode(Int64.self) {
                    return value
                }
                return -1
            }
        }, fold: {
            let folded = try await store.foldCounts()
            #expect(folded)
        })
    }

    static func store(_ batches: [Batch], into stores: [any EventStore], at receivedAt: Int64) async throws {
        for (offset, batch) in batches.enumerated() {
            for store in stores { _ = try await store.store(batch, app: "shop", receivedAt: receivedAt + Int64(offset)) }
        }
    }

    static func expectSameReports(_ compacted: any EventStore, _ plain: SQLiteEventStore, _ note: String) async throws {
        for filter in filters {
            let expected = try await plain.report(app: "shop", filter: filter)
            let report = try await compacted.report(app: "shop", filter: filter)
            #expect(try PostgresReportTests.json(report) == (try PostgresReportTests.json(expected)), "\(note): \(filter)")
        }
    }

    /// Every day row before `end` is the sum of its day's hour rows, and every past row the sum
    /// of its key's day rows, in every table.
    static func expectDaysAreHourSums(_ compacted: Compacted, before end: Int64) async throws {
        for table in RollupDays.tables {
            let keys = table.keys.joined(separator: ", ")
            #expect(try await compacted.count("SELECT count(*) FROM \(table.days)") > 0, "\(table.days)")
            let sums = "SELECT app, hour / 24 * 24, \(keys), \(table.values.map { "sum(\($0))" }.joined(separator: ", ")) FROM \(table.hours) "
                + "WHERE hour < \(end) GROUP BY app, hour / 24, \(keys)"
            let days = "SELECT app, hour, \(keys), \(table.values.joined(separator: ", ")) FROM \(table.days)"
            #expect(try await compacted.count("SELECT count(*) FROM (\(sums) EXCEPT \(days)) AS d") == 0, "\(table.days)")
            // Nor any other day row, but for rows of zeros (a key whose hours of a day retention cut
            // all went: it adds nothing).
            #expect(try await compacted.count("""
                SELECT count(*) FROM (\(days) WHERE \(table.values.map { "\($0) <> 0" }.joined(separator: " OR ")) EXCEPT \(sums)) AS d
                """) == 0, "\(table.days)")
            // Each past row is the sum of its key's day rows (rows of zeros aside, as above).
            let daySums = "SELECT app, \(keys), \(table.values.map { "sum(\($0))" }.joined(separator: ", ")) FROM \(table.days) GROUP BY app, \(keys)"
            let past = "SELECT app, \(keys), \(table.values.joined(separator: ", ")) FROM \(table.past)"
            #expect(try await compacted.count("SELECT count(*) FROM (\(daySums) EXCEPT \(past)) AS d") == 0, "\(table.past)")
            #expect(try await compacted.count("""
                SELECT count(*) FROM (\(past) WHERE \(table.values.map { "\($0) <> 0" }.joined(separator: " OR ")) EXCEPT \(daySums)) AS d
                """) == 0, "\(table.past)")
        }
    }

    @Test("A store with compacted days reports byte for byte what the same store reports without, through late events, steps and sessions of compacted days",
          arguments: StoreKind.all)
    func sameReports(kind: StoreKind) async throws {
        let (early, late) = try Self.batches(seed: 33)
        try await Self.withStores(kind) { compacted, plain in
            try await Self.store(early, into: [compacted.store, plain], at: 1_750_500_000_000)
            try await compacted.fold()
            let firstHour = Self.firstDay / F.hour
            // Three of the five days compacted: day rows for them, the rest still hours only.
            #expect(try await compacted.compact(firstHour + 3 * Self.day) == 3)
            #expect(try await compacted.compact(firstHour + 3 * Self.day) == 0)
            #expect(try await compacted.count("SELECT compacted_before FROM rollup_compaction WHERE app = 'shop'") == firstHour + 3 * Self.day)
            #expect(try await compacted.count("SELECT count(DISTINCT hour) FROM event_days") == 3)
            try await Self.expectDaysAreHourSums(compacted, before: firstHour + 3 * Self.day)
            try await Self.expectSameReports(compacted.store, plain, "compacted")
            // Late events, steps of stored runs, sessions listed again: for compacted days too
            // (on PostgreSQL read first as deltas, then folded into hours and days).
            try await Self.store(late, into: [compacted.store, plain], at: 1_750_600_000_000)
            try await Self.expectSameReports(compacted.store, plain, "late")
            try await compacted.fold()
            try await Self.expectDaysAreHourSums(compacted, before: firstHour + 3 * Self.day)
            try await Self.expectSameReports(compacted.store, plain, "late, folded")
            #expect(try await compacted.compact(firstHour + 10 * Self.day) == 2)
            try await Self.expectSameReports(compacted.store, plain, "all compacted")
            // Retention within a day: the days before it go, the day it cuts keeps its later hours' sums.
            let cut = firstHour + 2 * Self.day + 7
            #expect(try await compacted.store.dropRollups(hoursBefore: cut) > 0)
            _ = try await plain.dropRollups(hoursBefore: cut)
            #expect(try await compacted.count("SELECT count(*) FROM event_days WHERE hour < \(cut - 7)") == 0)
            #expect(try await compacted.count("SELECT count(*) FROM event_days WHERE hour = \(cut - 7)") > 0)
            try await Self.expectDaysAreHourSums(compacted, before: firstHour + 10 * Self.day)
            try await Self.expectSameReports(compacted.store, plain, "after retention")
            let whole = try await compacted.store.report(app: "shop", filter: ReportFilter())
            #expect(whole.eventsStored > 0 && !(whole.useCases["checkout"]?.steps.isEmpty ?? true) && whole.sessions.count > 0)
        }
    }

    @Test("Compacting up to today's start compacts every past day, and changes no report", arguments: StoreKind.all)
    func toToday(kind: StoreKind) async throws {
        let (early, _) = try Self.batches(seed: 7)
        try await Self.withStores(kind) { compacted, plain in
            try await Self.store(early, into: [compacted.store, plain], at: 1_750_500_000_000)
            try await compacted.fold()
            let now = Int64(Date().timeIntervalSince1970 * 1_000) / F.hour
            #expect(try await compacted.compact(RollupDays.start(ofHour: now)) == 5)
            try await Self.expectSameReports(compacted.store, plain, "compacted to today")
        }
    }
}
