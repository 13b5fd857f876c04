import CollectorTestSupport
import Foundation
import Logging
@testable import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing

/// Events, a session and aggregates for the retention tests, each batch in a session of its own.
private enum RetentionFixtures {
    static func batch(events: Int, aggregates: Int = 0, session: UUID = UUID()) throws -> Batch {
        let sessionText = session.uuidString.lowercased()
        let eventTexts = (0..<events).map { _ in
            #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(sessionText)","name":"ui.tap","kind":"point","type":"event","timestamp":1750000000000}"#
        }
        let aggregateTexts = (0..<aggregates).map { _ in
            var aggregate = AggregateFixtures.aggregate()
            aggregate["session"] = sessionText
            return AggregateFixtures.json(aggregate)
        }
        let text = """
            {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":1750000000500,
             "sdk":{"name":"NFLogger","version":"0.1.0"},
             "context":{"app_id":"com.example.shop","app_version":"2.1.0","os_name":"iOS","os_version":"18.1","locale":"en_GB",
                        "sessions":[{"id":"\(sessionText)","started_at":1749999990000}]},
             "events":[\(eventTexts.joined(separator: ","))],"aggregates":[\(aggregateTexts.joined(separator: ","))]}
            """
        return try BatchDecoder().decode(Array(text.utf8), limits: JSONParser.Limits())
    }

    static func count(_ path: String, _ sql: String) throws -> Int64 {
        try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000).scalarInt(sql)
    }

    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
    static let day = Retention.millisecondsPerDay
}

/// A value the test and the closures it hands out share.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func update<T: Sendable>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
    var current: Value { value.withLock { $0 } }
}

@Suite("Retention, on each store")
struct StoreRetentionTests {
    @Test("Whole days received before the cutoff are dropped and counted per app; newer events and the other totals stay; an expired event sent again is stored again",
          arguments: StoreKind.all)
    func dropsOlderDays(_ kind: StoreKind) async throws {
        // Whole days, which both stores drop alike (PostgreSQL drops day partitions; SQLite rows,
        // as SQLiteRetentionTests shows within a day).
        let day = RetentionFixtures.day
        let start = 20_000 * day
        try await kind.withStore { store in
            let old = try RetentionFixtures.batch(events: 30, aggregates: 4)
            let oldOther = try RetentionFixtures.batch(events: 5)
            let new = try RetentionFixtures.batch(events: 20, aggregates: 3)
            _ = try await store.store(old, app: "a", receivedAt: start + 1_000)
            _ = try await store.store(oldOther, app: "b", receivedAt: start + day - 1)
            _ = try await store.store(new, app: "a", receivedAt: start + 2 * day)  // at the cutoff: kept

            #expect(try await store.dropEvents(receivedBefore: start + 2 * day) == 35)
            let a = try await store.stats(app: "a")
            #expect(a.eventsStored == 50 && a.eventsExpired == 30 && a.eventsKept == 20)
            #expect(a.aggregatesStored == 7 && a.aggregatesExpired == 4)
            #expect(a.eventsByName["ui.tap"] == 50 && a.batches == 2 && a.requests == 2)
            let b = try await store.stats(app: "b")
            #expect(b.eventsStored == 5 && b.eventsExpired == 5 && b.aggregatesExpired == 0)
            #expect(try await store.storedIDs(app: "a", among: old.events.map(\.id)).isEmpty)
            #expect(try await store.storedIDs(app: "a", among: new.events.map(\.id)) == Set(new.events.map(\.id)))
            let exported = LineCounter()
            try await store.exportEvents(app: nil) { _ in exported.add() }
            #expect(exported.count == 20)
            #expect(try await store.exportAggregatePage(app: "a", after: 0, limit: 100).count == 3)

            // The report's event counts come from the hourly rollups, which retention of raw
            // events leaves (a year of trends costs rollup rows, not events): every event stored.
            let report = try await store.report(app: "a")
            #expect(report.pointEvents == 50 && report.spanEvents == 0 && report.eventsStored == 50)
            #expect(report.eventsBySource == AnalyticsReport.EventsBySource(native: 50, web: 0))
            #expect(report.aggregates["perf.frame"]?.records == 3)

            // Nothing left to drop: a second run drops nothing and counts nothing more.
            #expect(try await store.dropEvents(receivedBefore: start + 2 * day) == 0)
            #expect(try await store.stats(app: "a").eventsExpired == 30)
            // An expired event (and aggregate) sent again is new to the store: stored and counted again.
            #expect(try await store.store(old, app: "a", receivedAt: start + 3 * day) == StoreResult(accepted: 34, duplicates: 0))
        }
    }
}

@Suite("Retention in the SQLite store")
struct SQLiteRetentionTests {
    @Test("Events and aggregates received before the cutoff are dropped and counted per app; newer ones, sessions still in use and stats' other totals stay")
    func dropsOlderKeepsNewer() async throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        let old = try RetentionFixtures.batch(events: 30, aggregates: 4)
        let oldOther = try RetentionFixtures.batch(events: 5)
        let shared = UUID()  // a session listed by an old batch and by a new one: kept
        let oldShared = try RetentionFixtures.batch(events: 2, session: shared)
        let new = try RetentionFixtures.batch(events: 20, aggregates: 3)
        let newShared = try RetentionFixtures.batch(events: 1, session: shared)
        _ = try await store.store(old, app: "a", receivedAt: 1_000)
        _ = try await store.store(oldOther, app: "b", receivedAt: 4_999)
        _ = try await store.store(oldShared, app: "a", receivedAt: 2_000)
        _ = try await store.store(new, app: "a", receivedAt: 5_000)  // at the cutoff: kept
        _ = try await store.store(newShared, app: "a", receivedAt: 9_000)

        let expired = try await store.dropExpired(receivedBefore: 5_000)
        #expect(expired.events == 37 && expired.aggregates == 4)
        // The old batches' own sessions and the three old batches' rows; not the shared session.
        #expect(expired.sessions == 2 && expired.batches == 3)

        let a = try await store.stats(app: "a")
        #expect(a.eventsStored == 53 && a.eventsExpired == 32 && a.eventsKept == 21)
        #expect(a.aggregatesStored == 7 && a.aggregatesExpired == 4)
        #expect(a.eventsByName["ui.tap"] == 53 && a.batches == 4 && a.requests == 4)
        let b = try await store.stats(app: "b")
        #expect(b.eventsStored == 5 && b.eventsExpired == 5 && b.aggregatesExpired == 0)

        let oldIDs = old.events.map(\.id) + oldShared.events.map(\.id)
        let newIDs = new.events.map(\.id) + newShared.events.map(\.id)
        #expect(try await store.storedIDs(app: "a", among: oldIDs).isEmpty)
        #expect(try await store.storedIDs(app: "a", among: newIDs) == Set(newIDs))
        #expect(try RetentionFixtures.count(path, "SELECT count(*) FROM events") == 21)
        #expect(try RetentionFixtures.count(path, "SELECT count(*) FROM aggregates") == 3)
        #expect(try RetentionFixtures.count(path, "SELECT count(*) FROM aggregates WHERE received_ms < 5000") == 0)
        #expect(try RetentionFixtures.count(path, "SELECT count(*) FROM sessions") == 2)
        #expect(try RetentionFixtures.count(path, "SELECT count(*) FROM batches") == 2)

        // The report's event counts come from the hourly rollups, which retention of raw events
        // leaves: every event stored.
        let report = try await store.report(app: "a")
        #expect(report.pointEvents == 53 && report.spanEvents == 0 && report.eventsStored == 53)
        #expect(report.eventsBySource == AnalyticsReport.EventsBySource(native: 53, web: 0))

        // Nothing left to drop: a second run drops nothing and counts nothing more.
        #expect(try await store.dropEvents(receivedBefore: 5_000) == 0)
        #expect(try await store.stats(app: "a").eventsExpired == 32)
        // An expired event sent again is new to the store: stored and counted again.
        let again = try await store.store(old, app: "a", receivedAt: 10_000)
        #expect(again == StoreResult(accepted: 34, duplicates: 0))
        await store.close()
    }

    @Test("A large backlog goes in many bounded transactions, and an upload sent meanwhile is stored before the deletion ends")
    func boundedTransactionsLetUploadsThrough() async throws {
        let collector = try await TestCollector.start()
        let backlog = 100_000, rows = 1_000
        for _ in 0..<(backlog / 10_000) {
            _ = try await collector.store.store(try RetentionFixtures.batch(events: 10_000), app: TestCollector.app, receivedAt: 1_000)
        }
        let transactions = Shared(0)
        let (firstCommit, signal) = AsyncStream<Void>.makeStream()
        let deletion = Task {
            try await collector.store.dropExpired(receivedBefore: 2_000, transactionRows: rows) { expired in
                if transactions.update({ $0 += 1; return $0 }) == 1 { signal.yield(); signal.finish() }
            }
        }
        for await _ in firstCommit { break }
        let uuid = UUID().uuidString.lowercased()
        let response = try await CollectorClient(collector).post(CollectorClient.gzip(BatchFixtures.batch(events: [BatchFixtures.point(uuid)])))
        let transactionsWhenStored = transactions.current
        let expired = try await deletion.value

        #expect(response.status == 200)
        #expect(expired.events == backlog && expired.transactions >= backlog / rows)
        // Stored between two transactions, long before the last of the hundred.
        #expect(transactionsWhenStored < backlog / rows, "the upload waited for \(transactionsWhenStored) transactions")
        let stats = try await CollectorClient.reader(collector).json("GET", "v1/stats")
        #expect(stats["events_stored"] as? Int == backlog + 1 && stats["events_expired"] as? Int == backlog)
        #expect(stats["aggregates_expired"] as? Int == 0)
        #expect(try await collector.exportedEvents().map(\.event.id) == [UUID(uuidString: uuid)])
        await collector.stop()
    }

    @Test("A store at version 7 migrates: indexes for the deletion, its sessions (no receive time) kept, its old events dropped")
    func fromVersion7() async throws {
        let path = StoreFixtures.temporaryPath()
        do {
            let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1_000)
            try connection.enableWriteAheadLog()
            try SQLiteMigrator.migrate(connection, Array(CollectorSchema.migrations.prefix(7)))
            try connection.execute("""
                INSERT INTO contexts (id, app, sdk_name, sdk_version, app_id, app_version, os_name, os_version, locale)
                VALUES (1, 'a', 'NFLogger', '1', 'a', '1', 'iOS', '18', 'en');
                INSERT INTO sessions (app, uuid, context_id, started_ms) VALUES ('a', x'00', 1, 1);
                INSERT INTO events (app, uuid, batch_id, session, context_id, name, kind, type, timestamp_ms, received_ms)
                VALUES ('a', x'01', x'00', x'00', 1, 'ui.tap', 'point', 'event', 1, 1),
                       ('a', x'02', x'00', x'00', 1, 'ui.tap', 'point', 'event', 1, 100);
                INSERT INTO batches (app, uuid, first_received_ms, last_received_ms, requests, accepted, duplicates)
                VALUES ('a', x'00', 1, 1, 1, 2, 0);
                INSERT INTO totals (app, events, duplicates, batches, requests) VALUES ('a', 2, 0, 1, 1);
                """)
        }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        let plan = try RetentionFixtures.count(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('events_received', 'aggregates_received')")
        #expect(plan == 2)
        #expect(try await store.dropEvents(receivedBefore: 50) == 1)
        let stats = try await store.stats(app: "a")
        #expect(stats.eventsStored == 2 && stats.eventsExpired == 1)
        #expect(try RetentionFixtures.count(path, "SELECT count(*) FROM sessions") == 1)
        #expect(try RetentionFixtures.count(path, "SELECT count(*) FROM batches") == 0)
        await store.close()
    }

    @Test("The deletion finds its rows through the receive-time index, not a scan of the table")
    func deletionUsesTheIndex() async throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        await store.close()
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1_000)
        for table in ["events", "aggregates"] {
            let plan = try connection.prepare("""
                EXPLAIN QUERY PLAN DELETE FROM \(table) WHERE id IN (
                    SELECT id FROM \(table) INDEXED BY \(table)_received WHERE received_ms < 1 ORDER BY received_ms LIMIT 10)
                """).collect { $0.text(at: 3) ?? "" }
            #expect(plan.contains { $0.contains("USING COVERING INDEX \(table)_received (received_ms<?)") }, "\(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
    }
}

@Suite("The retention scheduler")
struct RetentionSchedulerTests {
    @Test("Retention days are 1 to 36500")
    func validDays() throws {
        #expect(try Retention(days: 1).cutoff(now: 10 * RetentionFixtures.day) == 9 * RetentionFixtures.day)
        #expect(try Retention(days: Retention.maxDays).days == 36_500)
        for days in [0, -1, Retention.maxDays + 1, Int.max] {
            #expect(throws: CollectorError.self) { try Retention(days: days) }
        }
    }

    @Test("Rollups are kept 400 days, or the events' days if more, or as given from the events' days to 36500; whole hours older go")
    func rollupDays() throws {
        #expect(try Retention(days: 30).rollupDays == 400)
        #expect(try Retention(days: 500).rollupDays == 500)
        #expect(try Retention(days: 30, rollupDays: 30).rollupDays == 30)
        #expect(try Retention(days: 30, rollupDays: 36_500).rollupDays == 36_500)
        for rollupDays in [29, 0, -1, Retention.maxDays + 1] {
            #expect(throws: CollectorError.self) { try Retention(days: 30, rollupDays: rollupDays) }
        }
        let day = RetentionFixtures.day, hour = HourlyRollup.hourMilliseconds
        // 2 days kept at 10 days and half an hour: hours before day 8's first are dropped; the
        // one the cutoff falls inside stays.
        #expect(try Retention(days: 1, rollupDays: 2).rollupCutoffHour(now: 10 * day + hour / 2) == 8 * 24)
        #expect(try Retention(days: 1, rollupDays: 2).rollupCutoffHour(now: day) == 0)
    }

    @Test("Each run drops the rollups' old hours after the events, and a failure there is logged and left to the next run")
    func rollupsDroppedEachRun() async throws {
        let hours = Shared<[Int64]>([])
        let retention = try Retention(days: 1, rollupDays: 3)
        let scheduler = RetentionScheduler(retention: retention, logger: Logger(label: "test.retention"),
                                           now: { 10 * RetentionFixtures.day },
                                           dropRollups: { hour in
                                               if hours.update({ $0.append(hour); return $0.count }) == 1 {
                                                   throw SQLiteError(code: 5, message: "database is locked")
                                               }
                                               return 3
                                           }, drop: { _ in 5 })
        #expect(await scheduler.runOnce() == 5)
        #expect(await scheduler.runOnce() == 5)
        #expect(hours.current == [7 * 24, 7 * 24])
    }

    @Test("A collector with retention drops old events at start and then on each interval; its stats say so",
          arguments: StoreKind.all)
    func runsAtStartAndOnSchedule(_ kind: StoreKind) async throws {
        let now = RetentionFixtures.nowMilliseconds
        let made = try await kind.makeStore()
        // Three days old: a whole day before the two days kept, on either store.
        _ = try await made.store.store(try RetentionFixtures.batch(events: 40, aggregates: 2), app: TestCollector.app,
                                       receivedAt: now - 3 * RetentionFixtures.day)
        _ = try await made.store.store(try RetentionFixtures.batch(events: 10), app: TestCollector.app, receivedAt: now)
        var configuration = CollectorConfiguration()
        configuration.retention = try Retention(days: 2)
        configuration.retention?.interval = .milliseconds(200)
        let collector = try await RunningCollector.start(store: made.store, configuration: configuration, afterStop: made.remove)
        let reader = CollectorClient.reader(collector)
        func stats(until done: ([String: Any]) -> Bool) async throws -> [String: Any] {
            let deadline = ContinuousClock.now + hangLimit
            while true {
                let stats = try await reader.json("GET", "v1/stats")
                if done(stats) || ContinuousClock.now > deadline { return stats }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let atStart = try await stats { $0["events_expired"] as? Int == 40 && $0["aggregates_expired"] as? Int == 2 }
        #expect(atStart["events_expired"] as? Int == 40 && atStart["aggregates_expired"] as? Int == 2)
        #expect(atStart["events_stored"] as? Int == 50 && atStart["aggregates_stored"] as? Int == 2)
        #expect(try await collector.exportedEvents().count == 10)

        // Events older than the retention stored while it serves go at a later run.
        _ = try await collector.store.store(try RetentionFixtures.batch(events: 7), app: TestCollector.app,
                                            receivedAt: now - 5 * RetentionFixtures.day)
        let later = try await stats { $0["events_expired"] as? Int == 47 }
        #expect(later["events_expired"] as? Int == 47 && later["events_stored"] as? Int == 57)
        #expect(try await collector.exportedEvents().count == 10)
        await collector.stop()
    }

    @Test("A failed run is logged and retried at the next one; the scheduler ends only when its task does")
    func failuresAreRetried() async throws {
        let calls = Shared<[Int64]>([])
        var retention = try Retention(days: 1)
        retention.interval = .milliseconds(20)
        let scheduler = RetentionScheduler(retention: retention, logger: Logger(label: "test.retention"),
                                           now: { 3 * RetentionFixtures.day }) { cutoff in
            let call = calls.update { $0.append(cutoff); return $0.count }
            if call <= 2 { throw SQLiteError(code: 5, message: "database is locked") }
            return 7
        }
        #expect(await scheduler.runOnce() == nil)  // the first failure
        let task = Task { await scheduler.run() }
        let deadline = ContinuousClock.now + hangLimit
        while calls.current.count < 4, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        await task.value
        let made = calls.current
        #expect(made.count >= 4)
        #expect(made.allSatisfy { $0 == 2 * RetentionFixtures.day })
        #expect(await scheduler.runOnce() == 7)
    }
}
