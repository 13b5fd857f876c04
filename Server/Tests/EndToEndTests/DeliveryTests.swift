import CollectorTestSupport
import FaultProxy
import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
@testable import NFLogger
import Synchronization
import Testing

/// Flushes until nothing is left, moving `clock` on by `step` before each flush after the first,
/// so every backoff ends by the clock rather than by waiting.
@discardableResult
private func deliverAll(_ logger: NFLogger, advancing clock: ManualClock, by step: TimeInterval) async -> FlushResult {
    let deadline = ContinuousClock.now + hangLimit
    var result = await logger.flush()
    while result.remainingEvents > 0 || result.error != nil {
        if ContinuousClock.now > deadline {
            Issue.record("not delivered within \(hangLimit): \(result)")
            return result
        }
        clock.advance(step)
        result = await logger.flush()
    }
    return result
}

@Suite("Delivery to a real collector")
struct DeliveryTests {
    @Test("N events logged → exactly N stored, 0 duplicates; the device keeps nothing", arguments: StoreKind.all)
    func exactlyOnce(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        let recorded = await logEvents(logger, points: 2_000, spans: 300)
        #expect(recorded.count == 2_300)
        let result = await deliverAll(logger)
        #expect(result.error == nil && result.remainingEvents == 0)

        let stats = try await collector.stats()
        #expect(stats.eventsStored == 2_300 && stats.duplicatesDropped == 0)
        #expect(stats.eventsByName == ["e2e.point": 2_000, "e2e.span": 300])
        let stored = try await storedIDs(collector)
        #expect(stored.count == 2_300 && Set(stored) == recorded)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.uploadedEvents == 2_300 && diagnostics.waitingForUpload == 0)
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.storedSpanEvents == 0)
        #expect(diagnostics.uploadedBatches >= 3)  // 1,000 events per batch by default

        // What arrived is what was logged: parameters, span durations, the context.
        let events = try await collector.exportedEvents()
        let span = try #require(events.first { $0.event.kind == .span })
        #expect(span.event.endParameters["ok"] == true)
        #expect((span.event.duration ?? -1) >= 0)
        #expect(span.context.appID == "com.example.e2e")
        await logger.close()
        await collector.stop()
    }

    @Test("Events logged while the collector is down are all delivered when it comes back")
    func collectorDownThenUp() async throws {
        let reserved = try ReservedPort()  // nothing listens on it, and nobody else can take it

        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: reserved.url))
        let recorded = await logEvents(logger, points: 800, spans: 100)
        let refused = await logger.flush()
        guard case .network? = refused.error else {
            Issue.record("expected a network error while the collector is down, got \(refused)")
            return
        }
        #expect(refused.remainingEvents == 900)

        reserved.release()
        let collector = try await TestCollector.start(port: reserved.port)
        await deliverAll(logger)
        let stored = try await storedIDs(collector)
        #expect(stored.count == 900 && Set(stored) == recorded)
        #expect(try await collector.stats().duplicatesDropped == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("503, 429 with Retry-After, connections dropped before and after the response: all delivered exactly once")
    func faults() async throws {
        let collector = try await TestCollector.start()
        let transport = FaultInjectingTransport([
            .status(503), .dropBeforeSending, .dropAfterResponse, .status(429, retryAfter: "1"),
            .pass, .status(500), .dropAfterResponse, .pass, .dropBeforeSending, .status(503),
        ])
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.upload.batchMaxEvents = 100
        configuration.upload.maxConcurrentUploads = 1  // one request at a time, so the order below is exact
        let logger = try NFLogger(configuration: configuration)
        // 800 events: eight full batches. Which batch meets which fault depends on which backoff
        // has ended when the next batch is chosen (the machine's speed), so every batch is the
        // same size and the counts below hold whichever batch a lost response hits.
        let recorded = await logEvents(logger, points: 750, spans: 50)
        await deliverAll(logger)

        let stored = try await storedIDs(collector)
        #expect(stored.count == 800, "every event stored once")
        #expect(Set(stored) == recorded)
        let stats = try await collector.stats()
        #expect(stats.eventsStored == 800)
        #expect(stats.duplicatesDropped == 200, "the two responses lost after the commit made two batches of 100 arrive twice")

        let sent = transport.sent
        // A batch whose response was lost is sent again with the same id (and the same events).
        for (index, request) in sent.enumerated() where request.fault == "dropAfterResponse" {
            let again = sent[(index + 1)...].first { $0.batchID == request.batchID }
            #expect(again?.events == request.events, "batch \(request.batchID) sent again unchanged")
        }
        // The request after the 429 waited at least its Retry-After of 1 second.
        if let throttled = sent.firstIndex(where: { $0.fault.hasPrefix("status(429") }) {
            #expect(sent[throttled + 1].at - sent[throttled].at >= .seconds(1))
        } else {
            Issue.record("the 429 was never sent")
        }
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.retriedUploads == 8 && diagnostics.uploadedEvents == 800)
        await logger.close()
        await collector.stop()
    }

    @Test("A batch that fails on its own waits alone: the next request carries another batch at once, the failed one follows unchanged")
    func failedBatchWaitsAlone() async throws {
        let collector = try await TestCollector.start()
        let transport = FaultInjectingTransport([.pass, .dropBeforeSending, .pass, .pass, .status(500), .dropBeforeSending, .pass])
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.upload.batchMaxEvents = 100
        configuration.upload.maxConcurrentUploads = 1  // one request at a time: the order below is exact
        // A failed batch waits a full-jitter draw from [0, initial backoff). On the real clock a
        // short draw may end before the next batch is chosen (a loaded machine is slow to get
        // there), and the same batch rightly goes again at once; with time standing still no
        // wait ends until the clock is moved.
        let clock = ManualClock()
        let logger = try NFLogger(configuration: configuration, clock: clock)
        let recorded = await logEvents(logger, points: 800, spans: 0)
        // Time standing still, every batch that did not fail goes; the three that failed wait.
        let first = await logger.flush()
        #expect(first.remainingEvents == 300, "\(first); sent: \(transport.sent.map(\.summary))")
        await deliverAll(logger, advancing: clock, by: configuration.upload.maxBackoff)
        #expect(Set(try await storedIDs(collector)) == recorded)

        let sent = transport.sent
        guard sent.count >= 8 else { Issue.record("only \(sent.count) requests"); return }
        // The first failure: the next request is another batch, sent without waiting.
        #expect(sent[2].batchID != sent[1].batchID)
        #expect(sent[2...].contains { $0.batchID == sent[1].batchID && $0.events == sent[1].events })
        // A 500 without Retry-After is a failure of that batch too.
        #expect(sent[5].batchID != sent[4].batchID, "the 500's batch waits alone")
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.retriedUploads == 3 && diagnostics.uploadedEvents == 800)
        await logger.close()
        await collector.stop()
    }

    @Test("A Retry-After outlives the process: a logger started on the same database before it ends sends nothing until then, and says why")
    func retryAfterOutlivesTheProcess() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        // Both loggers read one clock moved by hand: how long closing and reopening takes on this
        // machine does not eat into the wait.
        let clock = ManualClock()
        let first = FaultInjectingTransport([.status(503, retryAfter: "6")])
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url, transport: first), clock: clock)
        let recorded = await logEvents(logger, points: 50)
        let refused = await logger.flush()
        guard case .server(status: 503, _) = refused.error else { Issue.record("\(refused)"); return }
        await logger.close()
        #expect(first.sent.count == 1)

        // 3 s of the 6 pass between the processes; the next one waits out the other 3.
        clock.advance(3)
        let second = FaultInjectingTransport([])
        let restarted = try NFLogger(configuration: configuration(scratch, collector: collector.url, transport: second), clock: clock)
        let held = await restarted.flush()
        guard case .server(status: 503, _) = held.error else { Issue.record("not held: \(held)"); return }
        #expect(held.remainingEvents == 50 && second.sent.isEmpty)
        clock.advance(2.9)
        let stillHeld = await restarted.flush()
        guard case .server(status: 503, _) = stillHeld.error else { Issue.record("not held at 5.9 s: \(stillHeld)"); return }
        #expect(stillHeld.remainingEvents == 50 && second.sent.isEmpty, "sent before the Retry-After of 6 s ended")
        clock.advance(0.1)
        let resumed = await restarted.flush()
        #expect(resumed.error == nil && resumed.remainingEvents == 0, "\(resumed)")
        #expect(Set(try await storedIDs(collector)) == recorded)
        await restarted.close()

        // Once it has ended, the hold is history: the next start sends at once.
        let third = FaultInjectingTransport([])
        let later = try NFLogger(configuration: configuration(scratch, collector: collector.url, transport: third), clock: clock)
        _ = await logEvents(later, points: 10)
        let flushed = await later.flush()
        #expect(flushed.error == nil && flushed.remainingEvents == 0 && !third.sent.isEmpty)
        await later.close()
        await collector.stop()
    }

    @Test("A batch's wait grows with its own failures, not with other batches': four batches failing once each are each sent again within the first backoff, and four failures in a row on two lanes do not stop everything")
    func batchWaitGrowsWithItsOwnFailures() async throws {
        let collector = try await TestCollector.start()
        let transport = FaultInjectingTransport([.dropBeforeSending, .dropBeforeSending, .dropBeforeSending, .dropBeforeSending])
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.upload.batchMaxEvents = 100
        // A batch's first failure waits a draw below 5 s. Were the waits counted across batches,
        // the second, third and fourth failures in a row would draw below 10, 20 and 40 s: at
        // least one of them beyond 5 s, 63 times in 64.
        configuration.upload.initialBackoff = 5
        configuration.upload.maxBackoff = 60
        // Time moves only when the test moves it: the waits are the SDK's, not this machine's speed.
        let clock = ManualClock()
        let logger = try NFLogger(configuration: configuration, clock: clock)
        let recorded = await logEvents(logger, points: 800, spans: 0)

        // Time standing still, the four failed batches (on both lanes, four failures in a row)
        // wait, and every other batch goes meanwhile: nothing stopped everything.
        let first = await logger.flush()
        guard case .network? = first.error else {
            Issue.record("expected the dropped connections' error, got \(first); sent: \(transport.sent.map(\.summary))")
            return
        }
        #expect(first.remainingEvents == 400, "\(first)")
        let failed = transport.sent.prefix(4)
        #expect(failed.allSatisfy { $0.fault == "dropBeforeSending" } && Set(failed.map(\.batchID)).count == 4)
        #expect(transport.sent.count == 8, "four failed, four delivered, none sent again yet: \(transport.sent.map(\.fault))")

        // The first backoff's whole range later, each of the four has waited long enough.
        clock.advance(configuration.upload.initialBackoff)
        let second = await logger.flush()
        #expect(second.error == nil && second.remainingEvents == 0, "\(second)")
        #expect(Set(try await storedIDs(collector)) == recorded)
        let sent = transport.sent
        for batch in failed {
            #expect(sent.dropFirst(4).filter { $0.batchID == batch.batchID && $0.events == batch.events }.count == 1,
                    "batch \(batch.batchID) sent again once, unchanged")
        }
        await logger.close()
        await collector.stop()
    }

    /// Every seed on SQLite, the first on PostgreSQL too: surviving the faults is the SDK's part,
    /// counting what a lost answer sent again is the store's.
    static let faultRuns: [(StoreKind, UInt64)] = [1, 2, 3].map { (.sqlite, $0) } + StoreKind.all.filter { $0 != .sqlite }.map { ($0, 1) }

    @Test("Random faults with two uploads in flight: every event stored exactly once", arguments: faultRuns)
    func randomFaults(_ kind: StoreKind, seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let faults: [FaultInjectingTransport.Fault] = (0..<40).map { _ in
            switch random.next() % 6 {
            case 0: .status(503)
            case 1: .status(429, retryAfter: "0")
            case 2: .dropBeforeSending
            case 3: .dropAfterResponse
            default: .pass
            }
        }
        let collector = try await kind.startCollector()
        let transport = FaultInjectingTransport(faults)
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.upload.batchMaxEvents = 60
        let logger = try NFLogger(configuration: configuration)
        let recorded = await logEvents(logger, points: 1_500, spans: 100)
        await deliverAll(logger)
        let stored = try await storedIDs(collector)
        #expect(stored.count == 1_600 && Set(stored) == recorded)
        let lostResponses = transport.sent.filter { $0.fault == "dropAfterResponse" }.reduce(0) { $0 + $1.events }
        #expect(try await collector.stats().duplicatesDropped == lostResponses)
        await logger.close()
        await collector.stop()
    }

    @Test("A collector that answers 413 for big batches gets them split until they fit")
    func splitsOn413() async throws {
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.maxBodyBytes = 1_024  // a 500-event gzip batch is several times bigger
        let collector = try await TestCollector.start(configuration: collectorConfiguration)
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        let recorded = await logEvents(logger, points: 1_000)
        await deliverAll(logger)
        let stored = try await storedIDs(collector)
        #expect(stored.count == 1_000 && Set(stored) == recorded)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.quarantinedEvents == 0 && diagnostics.retriedUploads == 0)
        #expect(diagnostics.uploadedBatches > 2)
        await logger.close()
        await collector.stop()
    }

    @Test("A single event the collector refuses (400) is quarantined with the reason; the rest flows")
    func quarantine() async throws {
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.json.maxStringBytes = 1_000  // the SDK allows more: this one event cannot pass
        let collector = try await TestCollector.start(configuration: collectorConfiguration)
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        var recorded = await logEvents(logger, points: 300)
        let poison = await logger.logEvent(name: "poison.event", parameters: ["blob": String(repeating: "x", count: 5_000)])
        let poisonID = try #require(poison.recordedID)
        recorded.formUnion(await logEvents(logger, points: 300, prefix: "after"))
        let result = await deliverAll(logger)
        #expect(result.remainingEvents == 0)

        let stored = Set(try await storedIDs(collector))
        #expect(stored.count == 600 && stored == recorded)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.quarantinedEvents == 1)
        // The device tells the collector, in the diagnostics of a later batch (or one of its own).
        _ = await logger.flush()
        #expect(try await collector.stats().quarantinedOnDevices == 1)
        await logger.close()
        let row = try #require(try quarantined(scratch).first)
        #expect(row.id == poisonID && row.status == 400 && row.reason.contains("longer than 1000 bytes"))
        await collector.stop()
    }

    @Test("More events than the collector takes in one batch: 413, the SDK splits until they fit; all delivered, nothing quarantined")
    func countLimitSplits() async throws {
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.maxEventsPerBatch = 10  // the SDK sends up to 1,000
        let collector = try await TestCollector.start(configuration: collectorConfiguration)
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        let recorded = await logEvents(logger, points: 40)
        await deliverAll(logger)
        #expect(Set(try await storedIDs(collector)) == recorded)
        #expect(await logger.diagnostics().quarantinedEvents == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("A failed batch is kept slim (its compressed bytes, count and id); sent again and answered 413, it is still split and every event delivered")
    func keptBatchSplits() async throws {
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.maxEventsPerBatch = 10
        let collector = try await TestCollector.start(configuration: collectorConfiguration)
        let transport = FaultInjectingTransport([.dropBeforeSending, .dropBeforeSending])
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.upload.batchMaxEvents = 20
        let logger = try NFLogger(configuration: configuration)
        let recorded = await logEvents(logger, points: 40)
        await deliverAll(logger)
        #expect(Set(try await storedIDs(collector)) == recorded)
        let sent = transport.sent
        // Both dropped batches went again with the same id and all 20 events, then were split.
        for failed in sent.prefix(2) {
            #expect(sent.dropFirst(2).contains { $0.batchID == failed.batchID && $0.events == 20 })
        }
        #expect(await logger.diagnostics().quarantinedEvents == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("A failed single-event batch keeps its event: sent again and refused (400), it is quarantined with the reason")
    func keptSingleEventIsQuarantined() async throws {
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.json.maxStringBytes = 1_000
        let collector = try await TestCollector.start(configuration: collectorConfiguration)
        let transport = FaultInjectingTransport([.dropBeforeSending])
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url, transport: transport))
        let poison = await logger.logEvent(name: "poison.event", parameters: ["blob": String(repeating: "x", count: 5_000)])
        let poisonID = try #require(poison.recordedID)
        let result = await deliverAll(logger)
        #expect(result.remainingEvents == 0)
        // Then a batch of no events tells the collector of the quarantine.
        _ = await logger.flush()
        #expect(transport.sent.count == 3, "\(transport.sent)")
        #expect(transport.sent.count == 3 && transport.sent[1].batchID == transport.sent[0].batchID)
        #expect(transport.sent.count == 3 && transport.sent[2].events == 0)
        #expect(try await collector.stats().quarantinedOnDevices == 1)
        #expect(await logger.diagnostics().quarantinedEvents == 1)
        await logger.close()
        let row = try #require(try quarantined(scratch).first)
        #expect(row.id == poisonID && row.status == 400 && row.reason.contains("longer than 1000 bytes"))
        await collector.stop()
    }

    @Test("After a refused event is quarantined, batches are full-size again")
    func splitRecovers() async throws {
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.json.maxStringBytes = 1_000
        let collector = try await TestCollector.start(configuration: collectorConfiguration)
        let transport = ForwardingRecorder()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url, transport: transport))
        _ = await logger.logEvent(name: "poison.event", parameters: ["blob": String(repeating: "x", count: 5_000)])
        _ = await logEvents(logger, points: 2_000)
        let result = await deliverAll(logger)
        #expect(result.quarantinedEvents == 1)
        #expect(try await collector.stats().eventsStored == 2_000)
        // Bisection costs about log2(500) requests; then 500 per batch again.
        #expect(transport.recorded.count < 30, "\(transport.recorded.count) requests")
        await logger.close()
        await collector.stop()
    }

    @Test("A flush completes once what was stored before it is delivered, even while the app keeps logging", .timeLimit(.minutes(5)))
    func flushIsNotStarved() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        _ = await logEvents(logger, points: 20)
        let keepLogging = Task {
            while !Task.isCancelled {
                logger.logEvent(name: "busy.app", completion: nil)
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
        // Before the watermark it never completed: the time limit (a hang's, not a margin) says so.
        let result = await logger.flush()
        keepLogging.cancel()
        #expect(result.error == nil && result.uploadedEvents >= 20)
        await logger.close()
        await collector.stop()
    }

    @Test("A refused app key pauses uploads and keeps every event")
    func refusedKey() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.appKey = "wrong-key"
        let logger = try NFLogger(configuration: configuration)
        _ = await logEvents(logger, points: 50)
        let result = await logger.flush()
        #expect(result.error == .refused(status: 401, message: "unknown app key"))
        #expect(result.remainingEvents == 50)
        let again = await logger.flush()  // paused: no new request, same answer
        #expect(again.error == result.error)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 50 && diagnostics.lastUploadError == result.error)
        #expect(diagnostics.nextUploadAttempt.map { $0.timeIntervalSinceNow > 3_000 } == true)
        #expect(try await collector.stats().requests == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("Nothing is sent while suspended; resume() delivers")
    func suspended() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        logger.suspend()
        let recorded = await logEvents(logger, points: 40)
        #expect(await logger.flush().error == .suspended)
        #expect(try await collector.stats().eventsStored == 0)
        logger.resume()
        let deadline = ContinuousClock.now + hangLimit
        while try await collector.stats().eventsStored < 40 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Set(try await storedIDs(collector)) == recorded)
        await logger.close()
        await collector.stop()
    }

    @Test("The count threshold and the interval timer upload without a flush")
    func automaticTriggers() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var byCount = configuration(scratch, collector: collector.url)
        byCount.upload.countThreshold = 100
        let logger = try NFLogger(configuration: byCount)
        _ = await logEvents(logger, points: 250)
        try await waitUntil { try await collector.stats().eventsStored >= 200 }
        await logger.close()

        let scratch2 = TemporaryDirectory()
        var timed = configuration(scratch2, collector: collector.url)
        timed.upload.interval = 0.1
        let second = try NFLogger(configuration: timed)
        _ = await logEvents(second, points: 7, prefix: "timed")
        try await waitUntil { try await collector.stats().eventsByName["timed.point"] == 7 }
        await second.close()
        await collector.stop()
    }

    @Test("Events left by a previous run are sent when the next logger starts")
    func leftoversOnStart() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var offline = configuration(scratch, collector: collector.url)
        offline.uploadURL = nil
        offline.appKey = nil
        let first = try NFLogger(configuration: offline)
        let recorded = await logEvents(first, points: 30)
        await first.close()
        let second = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        try await waitUntil { try await collector.stats().eventsStored == 30 }
        #expect(Set(try await storedIDs(collector)) == recorded)
        await second.close()
        await collector.stop()
    }

    func waitUntil(timeout: Duration = hangLimit, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within \(timeout)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func quarantined(_ scratch: TemporaryDirectory) throws -> [(id: UUID, status: Int, reason: String)] {
        let connection = try SQLiteConnection(path: scratch.databaseURL.path, busyTimeoutMilliseconds: 1_000)
        let statement = try connection.prepare("SELECT uuid, http_status, reason FROM quarantined_events")
        return try statement.collect { ($0.uuid(at: 0), Int($0.int64(at: 1)), $0.text(at: 2) ?? "") }
    }
}
