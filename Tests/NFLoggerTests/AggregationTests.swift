import Foundation
import NFLoggerTesting
@_spi(NFLogShared) import NFLogSupport
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("Aggregation: events folded per name, window and series")
struct AggregationTests {
    static let frameRule = #"{"pattern":"perf.frame","window_s":60,"dimensions":["screen"]}"#
    static let screens = ["home", "cart", "pay"]

    static func policy(_ rules: String = frameRule) throws -> Policy {
        try Policy.parse(Data(#"{"version":1,"mode":"active","rules":{"aggregate":[\#(rules)]}}"#.utf8))
    }

    /// A frame time: a value, one of three screens, and a string that is not a dimension.
    static func frame(_ index: Int) -> LogParameters {
        ["ms": Double(index % 50) + 0.5, "screen": screens[index % 3], "build": "b1", "list": [1, 2]]
    }

    static func windowStart(_ milliseconds: Int64, _ seconds: Int64 = 60) -> Int64 {
        Aggregator.floor(milliseconds, to: seconds * 1_000)
    }

    func states(_ url: URL) throws -> [(row: [String: Any?], state: AggregateState)] {
        try DatabaseReader(url).rows("SELECT * FROM aggregate_events ORDER BY id").map { row in
            let bytes = (row["parameters"] as? [UInt8]) ?? Array(((row["parameters"] as? String) ?? "").utf8)
            return (row, try JSONDecoder().decode(AggregateState.self, from: Data(bytes)))
        }
    }

    @Test("Matching events fold into one aggregate per series; each completion names its aggregate; others are stored alone")
    func folding() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Self.policy()
        let logger = try NFLogger(configuration: configuration, clock: ManualClock())
        var ids: [String: Set<UUID>] = [:]
        for index in 0..<300 {
            let status = await logger.logEvent(name: "perf.frame", parameters: Self.frame(index))
            #expect(status.isAggregated, "\(status)")
            if let id = status.recordedID { ids[Self.screens[index % 3], default: []].insert(id) }
        }
        for _ in 0..<10 {
            let status = await logger.logEvent(name: "ui.tap", parameters: ["ms": 3])
            #expect(status.isRecorded && !status.isAggregated)
        }
        #expect(ids.values.map(\.count) == [1, 1, 1] && Set(ids.values.flatMap { $0 }).count == 3)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedAggregates == 3 && diagnostics.aggregatedEvents == 300 && diagnostics.storedPointEvents == 10)
        await logger.close()

        let stored = try states(directory.databaseURL)
        #expect(stored.count == 3)
        for (row, state) in stored {
            let screen = try #require(state.dimensions?["screen"])
            #expect(ids[screen] == [UUID(uuid: try #require(row["uuid"] as? [UInt8]).uuidTuple)])
            #expect(state.count == 100 && Set(state.measures.keys) == ["ms"], "non-numeric parameters are dropped")
            let ms = try #require(state.measures["ms"])
            #expect(ms.count == 100 && ms.min >= 0.5 && ms.max <= 49.5)
            #expect(row["count"] as? Int64 == 100 && row["end_ms"] as? Int64 == nil, "open until the window ends")
            #expect(row["start_ms"] as? Int64 == Self.windowStart(1_750_000_000_000))
        }
    }

    @Test("A window closes when it ends; a flush closes one open a second or more; each aggregate is uploaded once, the next of a window starting where the last ended")
    func windowsAndUpload() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.policyOptions.fallback = try Self.policy()
        let logger = try NFLogger(configuration: configuration, clock: clock)
        let start = clock.wallMilliseconds()
        let first = Self.windowStart(start)
        for index in 0..<30 { _ = await logger.logEvent(name: "perf.frame", parameters: ["ms": Double(index), "screen": "home"]) }
        // The window ends: the next write closes it, and it travels.
        clock.advance(TimeInterval(first + 60_000 - start) / 1_000 + 0.5)
        _ = await logger.logEvent(name: "perf.frame", parameters: ["ms": 100.0, "screen": "home"])
        #expect(await logger.flush().error == nil)
        var sent = transport.aggregates
        #expect(sent.count == 1, "the aggregate opened just now stays open")
        #expect(sent.first?.count == 30 && sent.first?.dimensions == ["screen": "home"] && sent.first?.windowSeconds == 60)
        #expect(sent.first?.start == Date(timeIntervalSince1970: Double(first) / 1_000))
        #expect(sent.first?.end == Date(timeIntervalSince1970: Double(first + 60_000) / 1_000))
        #expect(sent.first?.measures["ms"]?.min == 0 && sent.first?.measures["ms"]?.max == 29 && sent.first?.measures["ms"]?.sum == 435)

        // Open two seconds: a flush closes it early, ending now.
        clock.advance(2)
        let closedAt = clock.wallMilliseconds()
        #expect(await logger.flush().error == nil)
        sent = transport.aggregates
        #expect(sent.count == 2 && sent.last?.count == 1)
        #expect(sent.last?.start == Date(timeIntervalSince1970: Double(first + 60_000) / 1_000))
        #expect(sent.last?.end == Date(timeIntervalSince1970: Double(closedAt) / 1_000))

        // The same series and window again: a new aggregate, starting where the last ended.
        _ = await logger.logEvent(name: "perf.frame", parameters: ["ms": 7.0, "screen": "home"])
        clock.advance(1)
        #expect(await logger.flush().error == nil)
        #expect(await logger.flush().error == nil)
        sent = transport.aggregates
        #expect(sent.count == 3 && sent.last?.start == Date(timeIntervalSince1970: Double(closedAt) / 1_000))
        #expect(Set(sent.map(\.id)).count == 3)
        #expect(transport.batches.flatMap(\.aggregates).count == 3, "each sent once")
        #expect(transport.unreadableUploads.isEmpty)
        await logger.close()
    }

    @Test("Past max_series, a window's further series fold into one overflow aggregate, counted")
    func seriesLimit() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Self.policy(#"{"pattern":"perf.frame","window_s":60,"dimensions":["screen"],"max_series":2}"#)
        let logger = try NFLogger(configuration: configuration, clock: ManualClock())
        for screen in ["a", "b", "c", "d", "e"] {
            for value in 0..<2 { _ = await logger.logEvent(name: "perf.frame", parameters: ["ms": value, "screen": screen]) }
        }
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.aggregateOverflowEvents == 6 && diagnostics.storedAggregates == 3)
        await logger.close()
        let stored = try states(directory.databaseURL)
        #expect(stored.map { $0.state.dimensions?["screen"] } == ["a", "b", nil])
        #expect(stored.last?.state.overflow == true && stored.last?.state.count == 6)
        #expect(stored.last?.row["series"] as? String == AggregateEventTable.overflowSeries)
    }

    @Test("A folded event is committed before its completion; a logger started later folds into the same open aggregate")
    func durableAcrossRestart() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Self.policy()
        var logger = try NFLogger(configuration: configuration, clock: clock)
        var ids: Set<UUID> = []
        for index in 0..<50 {
            ids.insert(try #require(await logger.logEvent(name: "perf.frame", parameters: ["ms": index, "screen": "home"]).recordedID))
            // Another connection sees every folded event as soon as its completion says so.
            #expect(try DatabaseReader(directory.databaseURL).int("SELECT coalesce(sum(count), 0) FROM aggregate_events") == index + 1)
        }
        await logger.close()  // open for less than a second: a close leaves it open
        logger = try NFLogger(configuration: configuration, clock: clock)
        for index in 0..<25 {
            ids.insert(try #require(await logger.logEvent(name: "perf.frame", parameters: ["ms": index, "screen": "home"]).recordedID))
        }
        await logger.close()
        #expect(ids.count == 1)
        let stored = try states(directory.databaseURL)
        #expect(stored.count == 1 && stored.first?.state.count == 75 && stored.first?.state.measures["ms"]?.count == 75)
    }

    @Test("Folded while consent is pending: held; a denial deletes the held aggregates and counts their events, a grant releases them")
    func consent() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Self.policy()
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration, clock: ManualClock())
        for index in 0..<20 { _ = await logger.logEvent(name: "perf.frame", parameters: Self.frame(index)) }
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM aggregate_events WHERE held = 1") == 3)
        #expect(await logger.setConsent(.denied) == 20)
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM aggregate_events") == 0)
        #expect(await logger.logEvent(name: "perf.frame", parameters: Self.frame(0)) == .filtered(.consentDenied))
        await logger.setConsent(.pending)
        for index in 0..<9 { _ = await logger.logEvent(name: "perf.frame", parameters: Self.frame(index)) }
        await logger.setConsent(.granted)
        for index in 0..<3 { _ = await logger.logEvent(name: "perf.frame", parameters: Self.frame(index)) }
        await logger.close()
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.int("SELECT count(*) FROM aggregate_events WHERE held = 1") == 0)
        #expect(try reader.int("SELECT sum(count) FROM aggregate_events") == 12)
    }

    @Test("A span a rule matches folds when it ends: its duration and the numbers of both its parameter sets; its row goes")
    func spans() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Self.policy(#"{"pattern":"net.request","window_s":60,"dimensions":["path"]}"#)
        let logger = try NFLogger(configuration: configuration, clock: clock)
        for index in 0..<4 {
            let span: SpanHandle = logger.startEvent(name: "net.request", parameters: ["path": "/cart", "bytes": 1_000 + index])
            clock.advance(0.25)
            let status = await span.end(parameters: ["status": 200])
            #expect(status.isAggregated, "\(status)")
        }
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedSpanEvents == 0 && diagnostics.storedAggregates == 1 && diagnostics.aggregatedEvents == 4)
        await logger.close()
        let state = try #require(try states(directory.databaseURL).first?.state)
        #expect(state.dimensions == ["path": "/cart"] && Set(state.measures.keys) == ["duration_ms", "bytes", "status"])
        #expect(state.measures["duration_ms"]?.min == 250 && state.measures["duration_ms"]?.max == 250)
        #expect(state.measures["bytes"]?.sum == 4_006 && state.measures["status"]?.count == 4)
    }

    @Test("A non-finite number fails its event and folds nothing")
    func nonFinite() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Self.policy()
        let logger = try NFLogger(configuration: configuration, clock: ManualClock())
        let status = await logger.logEvent(name: "perf.frame", parameters: ["ms": Double.nan, "screen": "home"])
        guard case .failed(.invalidParameter(let key, _)) = status else {
            Issue.record("expected invalidParameter, got \(status)")
            return
        }
        #expect(key == "ms")
        #expect(await logger.diagnostics().storedAggregates == 0)
        await logger.close()
    }

    @Test("Encrypted at rest: the aggregate's state is sealed in the file and opened for upload")
    func encrypted() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.policyOptions.fallback = try Self.policy()
        configuration.encryptionKey = EncryptionKey.generate()
        let logger = try NFLogger(configuration: configuration, clock: clock)
        for index in 0..<10 { _ = await logger.logEvent(name: "perf.frame", parameters: ["ms": index, "screen": "secret-screen"]) }
        let file = try Data(contentsOf: configuration.databaseURL) + ((try? Data(contentsOf: URL(fileURLWithPath: configuration.databaseURL.path + "-wal"))) ?? Data())
        #expect(file.range(of: Data("secret-screen".utf8)) == nil)
        clock.advance(61)
        #expect(await logger.flush().error == nil)
        #expect(transport.aggregates.first?.dimensions == ["screen": "secret-screen"] && transport.aggregates.first?.count == 10)
        await logger.close()
    }

    @Test("The rolling database counts an aggregate as one row, and a dropped one as the events folded into it")
    func pruning() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        var configuration = directory.configuration()
        configuration.limits.maxStoredEvents = 100
        configuration.policyOptions.fallback = try Self.policy()
        let logger = try NFLogger(configuration: configuration, clock: clock)
        for index in 0..<500 { _ = await logger.logEvent(name: "perf.frame", parameters: Self.frame(index)) }
        #expect(await logger.diagnostics().prunedEvents == 0, "3 rows, however many events")
        clock.advance(61)  // the three close, and are the oldest rows now
        for index in 0..<99 { _ = await logger.logEvent(name: "ui.tap", parameters: ["index": index]) }
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.prunedEvents == 2 && diagnostics.storedAggregates == 1)
        await logger.close()
        let pruned = try DatabaseReader(directory.databaseURL).int("SELECT count FROM pruned_counts WHERE name = 'perf.frame'")
        #expect(pruned == 334, "the two oldest aggregates, of 167 events each")
    }
}

extension Array where Element == UInt8 {
    var uuidTuple: uuid_t {
        (self[0], self[1], self[2], self[3], self[4], self[5], self[6], self[7],
         self[8], self[9], self[10], self[11], self[12], self[13], self[14], self[15])
    }
}
