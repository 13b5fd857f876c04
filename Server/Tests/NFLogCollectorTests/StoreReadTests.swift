import CollectorTestSupport
import Foundation
@testable import NFLogCollector
@_spi(NFLogShared) @testable import NFLogSupport
import Testing

/// Batches built directly (no JSON), for stores with many thousands of events.
enum StoreFixtures {
    static let session = UUID()

    static func span(_ name: String, type: String, duration: Double, completed: Bool? = nil, abandoned: Bool = false) -> Batch.Event {
        Batch.Event(id: UUID(), session: session, name: name, kind: .span, type: type, timestamp: 1_000, end: 1_000 + Int64(duration),
                    durationMilliseconds: duration, parameters: nil,
                    endParameters: completed.map { #"{"completed":\#($0)}"# }, abandoned: abandoned,
                    transaction: nil, parentSpan: nil, source: .native, origin: nil)
    }

    static func point(_ name: String = "ui.tap") -> Batch.Event {
        Batch.Event(id: UUID(), session: session, name: name, kind: .point, type: "event", timestamp: 1_000, end: nil,
                    durationMilliseconds: nil, parameters: #"{"n":1}"#, endParameters: nil, abandoned: false,
                    transaction: nil, parentSpan: nil, source: .native, origin: nil)
    }

    static func batch(_ events: [Batch.Event]) -> Batch {
        Batch(version: 1, id: UUID(), sentAt: 2_000, sdkName: "NFLogger", sdkVersion: "0.1.0",
              context: Batch.Context(appID: "a", appVersion: "1", osName: "iOS", osVersion: "18", locale: "en",
                                     sessions: [Batch.Session(id: session, startedAt: 1_000, endedAt: 5_000)]),
              events: events, aggregates: [], diagnostics: nil)
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("nflog-reads-\(UUID().uuidString).sqlite").path
    }
}

@Suite("The report in bounded memory")
struct BoundedReportTests {
    @Test("Duration summaries from the rollups' buckets match the durations sorted in an array: counts exact, percentiles within 1% of the nearest rank, means to the microsecond",
          arguments: StoreKind.all)
    func sameNumbersAsArrays(_ kind: StoreKind) async throws {
        var generator = SystemRandomNumberGenerator()
        try await kind.withStore { store in
            var completed: [String: [Double]] = [:]
            var roundTrips: [Double] = []
            var events: [Batch.Event] = []
            for i in 0..<3_000 {
                let name = "case.\(i % 7)"
                // Repeated values and fractions, so ties and rounding are exercised.
                let duration = (Double(Int.random(in: 0...400, using: &generator)) * 0.37).rounded(.down) / 4
                switch i % 5 {
                case 0: events.append(StoreFixtures.span(name, type: "usecase", duration: duration, completed: false))
                case 1: events.append(StoreFixtures.span(name, type: "usecase", duration: duration, abandoned: true))
                case 2: events.append(StoreFixtures.span("net", type: "network", duration: duration)); roundTrips.append(duration)
                default:
                    events.append(StoreFixtures.span(name, type: "usecase", duration: duration, completed: i % 2 == 0 ? true : nil))
                    completed[name, default: []].append(duration)
                }
            }
            events.append(StoreFixtures.span("net", type: "network", duration: 9_999, abandoned: true))  // not a round trip
            _ = try await store.store(StoreFixtures.batch(events), app: "shop", receivedAt: 3_000)
            let report = try await store.report(app: "shop")
            #expect(report.useCases.count == 7 && report.useCasesOmitted == 0)
            for (name, durations) in completed {
                #expect(report.useCases[name]?.duration.matches(DurationSummary(durations)) == true, "\(name)")
            }
            #expect(report.network.matches(DurationSummary(roundTrips)))
        }
    }

    @Test("At most 1,000 use cases are listed: the most started, ties by name; the rest are counted", arguments: StoreKind.all)
    func useCaseCap(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            var events = (0..<1_005).map { StoreFixtures.span(String(format: "u%04d", $0), type: "usecase", duration: 1) }
            events += (0..<3).map { _ in StoreFixtures.span("z.most", type: "usecase", duration: 2) }
            _ = try await store.store(StoreFixtures.batch(events), app: "shop", receivedAt: 3_000)
            let report = try await store.report(app: "shop")
            #expect(report.useCases.count == 1_000 && report.useCasesOmitted == 6)
            #expect(report.useCases["z.most"]?.started == 3)
            #expect(report.useCases["u0998"] != nil && report.useCases["u0999"] == nil)
            let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
            #expect(json.contains(#""use_cases_omitted":6"#))
            #expect(try JSONDecoder().decode(AnalyticsReport.self, from: Data(json.utf8)) == report)
            #expect(report.render().contains("(6 less started use cases not listed)"))
        }
    }

    @Test("SortedDurations keeps only the ranks and the sum")
    func sortedDurations() {
        var summary = SortedDurations(count: 4)
        for value in [100.0, 200, 300, 400] { summary.add(value) }
        #expect(summary.summary == DurationSummary([400, 300, 200, 100]))
        #expect(summary.summary == DurationSummary(count: 4, p50Milliseconds: 200, p95Milliseconds: 400, meanMilliseconds: 250))
        #expect(SortedDurations(count: 0).summary == DurationSummary([]))
    }
}

@Suite("The read time limit")
struct ReadTimeLimitTests {
    @Test("A report over 200,000 spans of one hour's part (read from the events) with a 1 ms limit is stopped; the reader stays usable; the local export has no limit")
    func stopsLongReads() async throws {
        let store = try SQLiteEventStore(path: StoreFixtures.temporaryPath(), durableCommits: false, readTimeLimit: .milliseconds(1))
        for _ in 0..<200 {
            _ = try await store.store(StoreFixtures.batch((0..<1_000).map { _ in StoreFixtures.span("net", type: "network", duration: 5) }),
                                      app: "dev", receivedAt: 3_000)
        }
        // The whole hours of a range come from the rollups, in no time; the part of an hour at
        // either end from the events: here every one of them.
        let error = await #expect(throws: ReadTimeLimitExceeded.self) {
            try await store.report(app: "dev", filter: ReportFilter(from: 1, to: 3_000))
        }
        #expect(error?.limit == .milliseconds(1))
        #expect(error?.description == "the read took longer than 1 ms (the store's read time limit)")
        await #expect(throws: ReadTimeLimitExceeded.self) { _ = try await store.exportPage(app: "dev", after: 0, limit: 200_000) }
        // The same reader, at once: the whole-stream export has no limit.
        let lines = LineCounter()
        try await store.exportEvents(app: "dev") { _ in lines.add() }
        #expect(lines.count == 200_000)
        await store.close()
    }

    @Test("A read stopped by the limit does not disturb a write made meanwhile, and the next read succeeds",
          .timeLimit(.minutes(5)))  // the read is endless unless the limit stops it: this bounds a hang, not a margin
    func writesUnaffected() async throws {
        let store = try SQLiteEventStore(path: StoreFixtures.temporaryPath(), durableCommits: false, readTimeLimit: .milliseconds(300))
        let start = ContinuousClock.now
        // Endless unless stopped, through the path every read takes.
        async let endless: Int64 = store.onReadQueue(timeLimit: store.readTimeLimit) { connection in
            try connection.scalarInt("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r")
        }
        try await Task.sleep(for: .milliseconds(50))
        let stored = try await store.store(StoreFixtures.batch([StoreFixtures.point(), StoreFixtures.span("form", type: "usecase", duration: 7)]),
                                           app: "dev", receivedAt: 3_000)
        let wrote = ContinuousClock.now - start
        #expect(stored.accepted == 2)
        do {
            _ = try await endless
            Issue.record("the endless read returned")
        } catch let error as ReadTimeLimitExceeded {
            #expect(error.limit == .milliseconds(300))
        }
        let stopped = ContinuousClock.now - start
        // Not before the limit, however fast the machine; stopped at all, it was the limit that
        // stopped it, however slow the machine.
        #expect(wrote < stopped && stopped >= .milliseconds(300), "write \(wrote), read stopped \(stopped)")
        let report = try await store.report(app: "dev")
        #expect(report.pointEvents == 1 && withinOnePercent(report.useCases["form"]?.duration.p50Milliseconds, of: 7))
        #expect(try await store.apps() == ["dev"])
        await store.close()
        // A limit of Int64.max seconds (an operator's "never") is simply never reached.
        let patient = try SQLiteEventStore(path: StoreFixtures.temporaryPath(), durableCommits: false, readTimeLimit: .seconds(Int64.max))
        #expect(try await patient.apps() == [])
        await patient.close()
    }

    @Test("The deadline is removed after its body: a later long statement on the connection runs to the end")
    func deadlineRemoved() throws {
        let connection = try SQLiteConnection(path: ":memory:", busyTimeoutMilliseconds: 0)
        let count = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 300000) SELECT count(*) FROM r"
        #expect(try connection.withDeadline(.now + .seconds(60)) { try connection.scalarInt(count) } == 300_000)
        do {
            _ = try connection.withDeadline(.now - .seconds(1)) { try connection.scalarInt(count) }
            Issue.record("a statement past its deadline ran")
        } catch let error as SQLiteError {
            #expect(error.isInterrupt)
        }
        #expect(try connection.scalarInt(count) == 300_000)
    }

    @Test("The description names the limit in seconds, or milliseconds under one")
    func description() {
        #expect(ReadTimeLimitExceeded(limit: .seconds(30)).description == "the read took longer than 30 s (the store's read time limit)")
        #expect(ReadTimeLimitExceeded(limit: .milliseconds(1_500)).description.contains("1.5 s"))
        #expect(ReadTimeLimitExceeded(limit: .milliseconds(250)).description.contains("250 ms"))
    }
}

/// Counts lines from the export's `@Sendable` callback.
final class LineCounter: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

@Suite("Export in pages")
struct ExportPageTests {
    @Test("Pages, concatenated, are the app's whole export in order; other apps never appear; past the end is empty",
          arguments: StoreKind.all)
    func pages(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            // Two apps' batches interleaved, so the pages' row ids are not consecutive.
            for round in 0..<5 {
                _ = try await store.store(StoreFixtures.batch((0..<5).map { _ in StoreFixtures.point("a.\(round)") }), app: "a", receivedAt: 3_000)
                _ = try await store.store(StoreFixtures.batch([StoreFixtures.span("b", type: "network", duration: 1)]), app: "b", receivedAt: 3_000)
            }
            let whole = LineBytes()
            try await store.exportEvents(app: "a") { whole.append($0) }

            var paged: [UInt8] = []
            var counts: [Int] = []
            var after: Int64 = 0
            while true {
                let page = try await store.exportPage(app: "a", after: after, limit: 7)
                guard let last = page.last else {
                    #expect(page.count == 0 && page.lines.isEmpty)
                    break
                }
                #expect(last > after)
                paged += page.lines
                counts.append(page.count)
                after = last
            }
            #expect(counts == [7, 7, 7, 4])
            #expect(paged == whole.bytes)
            let lines = String(decoding: paged, as: UTF8.self).split(separator: "\n")
            #expect(lines.count == 25 && lines.allSatisfy { $0.hasPrefix(#"{"app":"a","#) })

            #expect(try await store.exportPage(app: "a", after: .max, limit: 7) == ExportPage(lines: [], count: 0, last: nil))
            #expect(try await store.exportPage(app: "a", after: 0, limit: 0) == ExportPage(lines: [], count: 0, last: nil))
            #expect(try await store.exportPage(app: "nobody", after: 0, limit: 7).last == nil)
        }
    }
}

/// Collects the export's lines from its `@Sendable` callback.
final class LineBytes: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: [UInt8] = []
    func append(_ line: [UInt8]) { lock.withLock { value += line } }
    var bytes: [UInt8] { lock.withLock { value } }
}

@Suite("Checkpoints and reads")
struct CheckpointTests {
    @Test("The writer checkpoints as SQLite does, which keeps the log small, and has it back after each read")
    func writerCheckpointsBetweenReads() async throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteEventStore(path: path)
        #expect(try store.writerPragma("wal_autocheckpoint") == Int64(WALCheckpointer.writerCheckpointPages))
        for round in 0..<200 {
            _ = try await store.store(StoreFixtures.batch((0..<1_000).map { _ in StoreFixtures.point() }), app: "a", receivedAt: 1)
            if round % 50 == 0 { _ = try await store.report(app: "a") }
        }
        // After a read the checkpointer catches up, then hands checkpoints back to the writer.
        let deadline = ContinuousClock.now + hangLimit
        while try store.writerPragma("wal_autocheckpoint") != Int64(WALCheckpointer.writerCheckpointPages), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try store.writerPragma("wal_autocheckpoint") == Int64(WALCheckpointer.writerCheckpointPages))
        _ = try await store.store(StoreFixtures.batch((0..<1_000).map { _ in StoreFixtures.point() }), app: "a", receivedAt: 1)
        let log = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        let file = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        // Without checkpoints the log would hold all 201 batches, more than the file (still nearly
        // empty); with them it restarts from its beginning whenever it passes 1,000 pages (and
        // what a read let pile up).
        #expect(2 * log < file, "log \(log) bytes, file \(file) bytes")
        #expect(try await store.stats(app: "a").eventsStored == 201_000)
        await store.close()
    }
}

@Suite("Collector schema migrations")
struct CollectorMigrationTests {
    @Test("A store at each earlier version migrates to the newest, and its report reads the rows it had", arguments: 1...3)
    func fromEarlierVersion(version: Int) async throws {
        let path = StoreFixtures.temporaryPath()
        do {
            let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1_000)
            try connection.enableWriteAheadLog()
            try SQLiteMigrator.migrate(connection, Array(CollectorSchema.migrations.prefix(version)))
            #expect(try connection.scalarInt("PRAGMA user_version") == Int64(version))
            try connection.execute("""
                INSERT INTO contexts (id, app, sdk_name, sdk_version, app_id, app_version, os_name, os_version, locale)
                VALUES (1, 'a', 'NFLogger', '1', 'a', '1', 'iOS', '18', 'en');
                INSERT INTO events (app, uuid, batch_id, session, context_id, name, kind, type, timestamp_ms, end_ms, duration_ms,
                                    end_parameters, received_ms)
                VALUES ('a', x'01', x'00', x'00', 1, 'form.signup', 'span', 'usecase', 1, 11, 10, '{"completed":true}', 1),
                       ('a', x'02', x'00', x'00', 1, 'form.signup', 'span', 'usecase', 1, 31, 30, '{"completed":false}', 1),
                       ('a', x'03', x'00', x'00', 1, 'form.signup', 'span', 'usecase', 1, 21, 20, NULL, 1);
                INSERT INTO totals (app, events, duplicates, batches, requests) VALUES ('a', 3, 0, 1, 1);
                """)
        }
        let store = try SQLiteEventStore(path: path)
        let report = try await store.report(app: "a")
        let signup = try #require(report.useCases["form.signup"])
        #expect(signup.started == 3 && signup.abandoned == 1 && signup.completed == 2)
        #expect(withinOnePercent(signup.duration.p50Milliseconds, of: 10) && withinOnePercent(signup.duration.p95Milliseconds, of: 20))
        #expect(report.spanEvents == 3 && report.pointEvents == 0)
        // Rows from before sources existed are native (migration 7 left their source NULL).
        #expect(report.eventsBySource == AnalyticsReport.EventsBySource(native: 3, web: 0) && report.webOrigins == 0)
        await store.close()
        let reopened = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1_000)
        #expect(try reopened.scalarInt("PRAGMA user_version") == Int64(CollectorSchema.migrations.count))
    }
}
