import CollectorTestSupport
import Foundation
import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
@testable import NFLogger
import NFLogCollectorTesting
import Synchronization
import Testing

// Consent through the real collector and real SQLite files: grants and denials that race a
// held database, a batch in flight, spans across consent, close and the next start.

/// Runs SQL on the SDK's database through a connection of the test's own.
private func execute(_ sql: String, on url: URL) throws {
    let connection = try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: 5_000)
    try connection.execute(sql)
}

private func count(_ sql: String, in url: URL) throws -> Int {
    Int(try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: 5_000).scalarInt(sql))
}

/// Flushes until a flush ends without an error (a backoff left by a failure runs out), or `timeout` (a hang).
/// Unlike `deliverAll`, it does not wait for `remainingEvents` to reach 0: held rows count there.
@discardableResult
private func flushUntilQuiet(_ logger: NFLogger, timeout: Duration = hangLimit) async -> FlushResult {
    let deadline = ContinuousClock.now + timeout
    var result = await logger.flush()
    while result.error != nil && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(25))
        result = await logger.flush()
    }
    return result
}

/// A transport that holds every request until the test opens the gate.
private final class GatedTransport: HTTPTransport {
    private let real = DefaultHTTPTransport(timeout: hangLimitSeconds)
    private let isOpen = Mutex(false)
    private let enteredCount = Mutex(0)

    var entered: Int { enteredCount.withLock { $0 } }
    func open() { isOpen.withLock { $0 = true } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        enteredCount.withLock { $0 += 1 }
        while !isOpen.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        return try await real.send(request)
    }
}

/// Labelled statuses and consent completions, in the order their completions ran.
private final class Outcomes: Sendable {
    private let entries = Mutex<[(String, String)]>([])
    private let statuses = Mutex<[String: LogStatus]>([:])

    func status(_ label: String) -> LogCompletion {
        { status in
            self.statuses.withLock { $0[label] = status }
            self.entries.withLock { $0.append((label, "\(status)")) }
        }
    }

    func consent(_ label: String) -> @Sendable (Int) -> Void {
        { deleted in self.entries.withLock { $0.append((label, "\(deleted)")) } }
    }

    subscript(label: String) -> LogStatus? { statuses.withLock { $0[label] } }
    var order: [String] { entries.withLock { $0.map(\.0) } }
    func value(_ label: String) -> String? { entries.withLock { $0.first { $0.0 == label }?.1 } }

    func wait(for count: Int) async {
        while entries.withLock({ $0.count }) < count { try? await Task.sleep(for: .milliseconds(5)) }
    }
}

@Suite("Consent through the real collector")
struct ConsentDeliveryTests {
    @Test("A grant made while another connection holds the database is not lost: held events, and those logged after, are delivered")
    func grantDuringBusyLock() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        configuration.limits.busyTimeout = 0  // valid: "0: not at all"
        let logger = try NFLogger(configuration: configuration)
        let before = try #require(await logger.logEvent(name: "held.before").recordedID)

        let lock = try HeldWriteLock(scratch.databaseURL)
        #expect(await logger.setConsent(.granted) == 0)
        lock.release()
        #expect(logger.consent == .granted)
        let after = try #require(await logger.logEvent(name: "after.grant").recordedID)
        await flushUntilQuiet(logger)
        let stored = Set(try await storedIDs(collector))
        let held = try count("SELECT count(*) FROM point_events WHERE held = 1", in: scratch.databaseURL)
        #expect(stored.contains(before), "the event held before the grant was not delivered")
        #expect(stored.contains(after), "the event logged after the grant returned was not delivered")
        #expect(held == 0, "\(held) rows are still held with consent granted")
        await logger.close()

        // The consent file says granted: a restart does not release them either.
        let restarted = try NFLogger(configuration: configuration)
        #expect(restarted.consent == .granted)
        await flushUntilQuiet(restarted)
        let afterRestart = Set(try await storedIDs(collector))
        #expect(afterRestart.isSuperset(of: [before, after]), "still not delivered after a restart with consent granted")
        await restarted.close()
        await collector.stop()
    }

    @Test("A grant whose release of the held rows fails (SQLite refuses the UPDATE) is not lost: the held events still go once the database accepts writes")
    func grantWhoseReleaseFails() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration)
        let held = await logEvents(logger, points: 3, prefix: "held")
        #expect(held.count == 3)
        // A fault injected on purpose, standing in for a full disk or an I/O error during the UPDATE.
        try execute("""
            CREATE TRIGGER review14_refuse_release BEFORE UPDATE OF held ON point_events
            BEGIN SELECT RAISE(ABORT, 'injected: the release fails'); END
            """, on: scratch.databaseURL)
        _ = await logger.setConsent(.granted)
        try execute("DROP TRIGGER review14_refuse_release", on: scratch.databaseURL)

        let after = try #require(await logger.logEvent(name: "after.grant").recordedID)
        await flushUntilQuiet(logger)
        let stored = Set(try await storedIDs(collector))
        #expect(stored.contains(after))
        #expect(stored.isSuperset(of: held), "\(held.subtracting(stored).count) of 3 held events were never released, with consent granted")
        await logger.close()
        await collector.stop()
    }

    @Test("A denial made while another connection holds the database still deletes the held events, once it can, and counts them")
    func denialDuringBusyLock() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        configuration.limits.busyTimeout = 0
        let logger = try NFLogger(configuration: configuration)
        let held = await logEvents(logger, points: 5, prefix: "held")
        #expect(held.count == 5)

        let lock = try HeldWriteLock(scratch.databaseURL)
        let deleted = await logger.setConsent(.denied)
        lock.release()
        let diagnostics = await logger.diagnostics()
        // The completion came while the database was still locked: nothing could be deleted yet
        // (it says 0); the deletion is owed and done at the next write or queue drain, which the
        // diagnostics below cause, and counted there.
        #expect(deleted == 0, "the denial's completion reported \(deleted) deleted")
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.consentDeletedEvents == 5,
                "after the denial: \(diagnostics.storedPointEvents) stored, \(diagnostics.consentDeletedEvents) deleted")
        await logger.close()

        let restarted = try NFLogger(configuration: configuration)
        #expect(restarted.consent == .denied)
        #expect(await restarted.diagnostics().storedPointEvents == 0, "the held events outlive the denial, across a restart")
        await restarted.close()
        await collector.stop()
    }

    @Test("A span started with consent and ended while pending, then denied: what its end recorded while pending is not uploaded")
    func spanEndedWhilePendingThenDenied() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        let (span, started) = await logger.startEvent(name: "checkout.flow", parameters: ["step": 1])
        #expect(started == .recorded(span.id))
        logger.consent = .pending
        #expect(await span.end(parameters: ["card_last4": "4242"]) == .recorded(span.id))
        _ = await logger.setConsent(.denied)
        await deliverAll(logger)
        let events = try await collector.exportedEvents()
        let uploaded = events.first { $0.event.id == span.id }
        let endParameters = uploaded?.event.endParameters
        #expect(endParameters?["card_last4"] == nil,
                "parameters recorded while consent was pending were uploaded after the user denied consent: \(String(describing: endParameters))")
        await logger.close()
        await collector.stop()
    }

    @Test("Rapid toggling pending → granted → pending → denied without waiting: each event keeps the consent it was logged under")
    func rapidToggling() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        let outcomes = Outcomes()
        logger.setConsent(.pending, completion: outcomes.consent("c1.pending"))
        logger.logEvent(name: "t.a", completion: outcomes.status("a"))
        logger.setConsent(.granted, completion: outcomes.consent("c2.granted"))
        logger.logEvent(name: "t.b", completion: outcomes.status("b"))
        logger.setConsent(.pending, completion: outcomes.consent("c3.pending"))
        logger.logEvent(name: "t.c", completion: outcomes.status("c"))
        logger.setConsent(.denied, completion: outcomes.consent("c4.denied"))
        logger.logEvent(name: "t.d", completion: outcomes.status("d"))
        await outcomes.wait(for: 8)
        #expect(outcomes["d"] == .filtered(.consentDenied))
        #expect(outcomes.value("c4.denied") == "1" && outcomes.value("c2.granted") == "0")
        let consentOrder = outcomes.order.filter { $0.hasPrefix("c") && $0.contains(".") }
        #expect(consentOrder == ["c1.pending", "c2.granted", "c3.pending", "c4.denied"])
        await deliverAll(logger)
        let stored = Set(try await storedIDs(collector))
        let a = try #require(outcomes["a"]?.recordedID), b = try #require(outcomes["b"]?.recordedID)
        let c = try #require(outcomes["c"]?.recordedID)
        #expect(stored == [a, b], "a (held, then granted) and b (granted) go; c (held, then denied) does not")
        #expect(!stored.contains(c))
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.consent == .denied && diagnostics.consentDeletedEvents == 1 && diagnostics.storedPointEvents == 0)
        #expect(ConsentFile.load(forDatabase: scratch.databaseURL) == .denied)
        await logger.close()
        await collector.stop()
    }

    @Test("Denied while a batch of consented events is in flight: that batch is delivered exactly once; the held events are deleted")
    func denialWhileUploadInFlight() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let transport = GatedTransport()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url, transport: transport))
        let consented = await logEvents(logger, points: 20, prefix: "ok")
        let flush = Task { await logger.flush() }
        while transport.entered == 0 { try await Task.sleep(for: .milliseconds(5)) }
        logger.consent = .pending
        let held = await logEvents(logger, points: 10, spans: 2, prefix: "held")
        #expect(held.count == 12)
        #expect(await logger.setConsent(.denied) == 12)
        transport.open()
        _ = await flush.value
        await deliverAll(logger)
        let stored = try await storedIDs(collector)
        #expect(Set(stored) == consented && stored.count == consented.count)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.consentDeletedEvents == 12 && diagnostics.storedPointEvents == 0 && diagnostics.storedSpanEvents == 0)
        #expect(diagnostics.uploadedEvents == 20)
        await logger.close()
        await collector.stop()
    }

    @Test("Spans across consent: started while pending and ended after granting goes once with its end; started while pending and ended after denial is filtered and deleted")
    func spansAcrossConsent() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration)
        let (granted, grantedStart) = await logger.startEvent(name: "span.granted", parameters: ["p": 1])
        #expect(grantedStart == .recorded(granted.id))
        _ = await logger.setConsent(.granted)
        #expect(await granted.end(parameters: ["e": 2]) == .recorded(granted.id))
        logger.consent = .pending
        let (denied, deniedStart) = await logger.startEvent(name: "span.denied")
        #expect(deniedStart == .recorded(denied.id))
        #expect(await logger.setConsent(.denied) == 1)
        #expect(await denied.end() == .filtered(.consentDenied))
        #expect(await logger.endEvent(id: denied.id) == .filtered(.consentDenied))
        await deliverAll(logger)
        let events = try await collector.exportedEvents()
        #expect(events.count == 1)
        let span = try #require(events.first)
        #expect(span.event.id == granted.id)
        #expect(span.event.endParameters["e"] == .integer(2))
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedSpanEvents == 0 && diagnostics.openSpans == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("close() right after setConsent(.denied): the denial is applied and saved before the database closes; its completion runs first")
    func closeRightAfterSetConsent() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration)
        let held = await logEvents(logger, points: 10, prefix: "held")
        #expect(held.count == 10)
        let outcomes = Outcomes()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            logger.setConsent(.denied, completion: outcomes.consent("consent"))
            logger.close { outcomes.consent("close")(0); done.resume() }
        }
        #expect(outcomes.order == ["consent", "close"])
        #expect(outcomes.value("consent") == "10")
        #expect(ConsentFile.load(forDatabase: scratch.databaseURL) == .denied)

        let restarted = try NFLogger(configuration: configuration)
        #expect(restarted.consent == .denied)
        #expect(await restarted.logEvent(name: "later.event") == .filtered(.consentDenied))
        let diagnostics = await restarted.diagnostics()
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.consent == .denied)
        await restarted.close()
        await collector.stop()
    }

    @Test("The consent file: unreadable contents fall back to initialConsent; a file that cannot be saved leaves the choice in force until restart")
    func consentFileFaults() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        let file = ConsentFile.fileURL(forDatabase: scratch.databaseURL)

        try Data("GARBAGE\u{0}\n".utf8).write(to: file)
        let first = try NFLogger(configuration: configuration)
        #expect(first.consent == .pending)
        await first.close()

        try Data("  denied\n".utf8).write(to: file)
        let second = try NFLogger(configuration: configuration)
        #expect(second.consent == .denied)
        await second.close()

        // The consent path taken by a directory: saving fails, the choice applies in memory.
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        let third = try NFLogger(configuration: configuration)
        #expect(third.consent == .pending)
        let held = await logEvents(third, points: 4, prefix: "held")
        #expect(held.count == 4)
        #expect(await third.setConsent(.denied) == 4)
        #expect(await third.logEvent(name: "after.denied") == .filtered(.consentDenied))
        #expect(await third.diagnostics().storedPointEvents == 0)
        await third.close()
        let fourth = try NFLogger(configuration: configuration)
        #expect(fourth.consent == .pending, "not saved: the configuration's initial consent applies again")
        await fourth.close()
        #expect(try await storedIDs(collector).isEmpty)
        await collector.stop()
    }

    @Test("setConsent(.denied) after close(): if the denial is saved (it is), the next start deletes what was held rather than keeping it forever")
    func denialAfterCloseIsReconciledAtStart() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration)
        #expect(await logEvents(logger, points: 3, prefix: "held").count == 3)
        await logger.close()
        let deleted = await logger.setConsent(.denied)
        let saved = ConsentFile.load(forDatabase: scratch.databaseURL)

        let restarted = try NFLogger(configuration: configuration)
        let diagnostics = await restarted.diagnostics()
        if saved == .denied {
            #expect(restarted.consent == .denied)
            #expect(diagnostics.storedPointEvents == 0,
                    "the closed logger saved the denial (its completion said \(deleted) deleted); at the next start, \(diagnostics.storedPointEvents) held events remain, never to be sent or deleted")
        } else {
            #expect(restarted.consent == .pending)
        }
        await restarted.close()
        await collector.stop()
    }

    @Test("Events held under initialConsent .pending are sent once a later start's consent is granted (an app update that drops its consent prompt)")
    func heldEventsReleasedWhenStartingGranted() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        let first = try NFLogger(configuration: configuration)
        let held = await logEvents(first, points: 3, prefix: "held")
        #expect(held.count == 3)
        await first.close()

        configuration.initialConsent = .granted  // the app never set a consent: the configuration's applies
        let second = try NFLogger(configuration: configuration)
        #expect(second.consent == .granted)
        let after = try #require(await second.logEvent(name: "after.update").recordedID)
        await flushUntilQuiet(second)
        let stored = Set(try await storedIDs(collector))
        #expect(stored.contains(after))
        #expect(stored.isSuperset(of: held), "\(held.subtracting(stored).count) of 3 held events stay on the device with consent granted")
        await second.close()
        await collector.stop()
    }
}
