import Foundation
import NFLogCollector
@testable import NFLogger
import NFLogCollectorTesting
import Testing
#if canImport(Glibc)
import Glibc
import NFLogTestSupport
#endif

@Suite("Consent: pending holds events on the device, granted sends them, denied deletes them")
struct ConsentTests {
    @Test("Pending: events are recorded and nothing is uploaded; granting uploads each exactly once")
    func pendingThenGranted() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration)
        #expect(logger.consent == .pending)
        let held = await logEvents(logger, points: 120, spans: 10)
        #expect(held.count == 130)
        let flush = await logger.flush()
        #expect(flush.error == .consentPending && flush.uploadedEvents == 0)
        #expect(try await storedIDs(collector).isEmpty)

        #expect(await logger.setConsent(.granted) == 0)
        await deliverAll(logger)
        let stored = try await storedIDs(collector)
        #expect(Set(stored) == held && stored.count == held.count, "each held event exactly once")
        #expect(await logger.diagnostics().consent == .granted)
        await logger.close()
        await collector.stop()
    }

    @Test("Denied after pending: the held events are deleted and counted; those recorded with consent still go; later calls are filtered")
    func pendingThenDenied() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        let consented = await logEvents(logger, points: 30, prefix: "before")
        logger.consent = .pending
        let held = await logEvents(logger, points: 50, spans: 5, prefix: "held")
        #expect(held.count == 55)
        let deleted = await logger.setConsent(.denied)
        #expect(deleted == 55)
        #expect(await logger.logEvent(name: "after.denied") == .filtered(.consentDenied))
        let (span, status) = await logger.startEvent(name: "after.span")
        #expect(status == .filtered(.consentDenied))
        #expect(await span.end() == .filtered(.consentDenied))
        await deliverAll(logger)
        #expect(Set(try await storedIDs(collector)) == consented)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.consent == .denied && diagnostics.consentDeletedEvents == 55)
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.storedSpanEvents == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("The app's choice is saved: a new logger starts with it, whatever the configuration's initial consent")
    func persisted() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let first = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        await first.setConsent(.pending)
        let held = await logEvents(first, points: 20)
        await first.close()

        var restarted = configuration(scratch, collector: collector.url)
        restarted.initialConsent = .granted
        let second = try NFLogger(configuration: restarted)
        #expect(second.consent == .pending)
        #expect(await second.flush().error == .consentPending)
        #expect(try await storedIDs(collector).isEmpty)
        second.consent = .granted
        await deliverAll(second)
        #expect(Set(try await storedIDs(collector)) == held)
        await second.close()
        await collector.stop()
    }

    @Test("The rolling limits apply while pending, and what they drop is counted")
    func limitsWhilePending() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.initialConsent = .pending
        configuration.limits.maxStoredEvents = 100
        let logger = try NFLogger(configuration: configuration)
        _ = await logEvents(logger, points: 300)
        logger.requests.maintain()  // the Pruner's periodic pass, now
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents <= 100 && diagnostics.prunedEvents >= 200)
        logger.consent = .granted
        await deliverAll(logger)
        #expect(try await storedIDs(collector).count == diagnostics.storedPointEvents)
        await logger.close()
        await collector.stop()
    }

    @Test("kill -9 while pending: every receipted event survives on the device, nothing was sent, and granting delivers each exactly once")
    func killNineWhilePending() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let receipts = scratch.url.appendingPathComponent("receipts.txt").path
        let arguments = ["--db", scratch.databaseURL.path, "--collector", collector.url.absoluteString, "--max-rows", "10000000"]
        let (child, output) = try Child.start(["log", "--receipts", receipts, "--set-consent", "pending"] + arguments)
        _ = await Child.offPool { output.fileHandleForReading.availableData }  // "ready": consent saved, logging starts
        try await Task.sleep(for: .milliseconds(400))
        kill(child.processIdentifier, SIGKILL)
        await Child.offPool { child.waitUntilExit() }
        #expect(child.terminationReason == .uncaughtSignal)
        #expect(try await storedIDs(collector).isEmpty, "nothing is uploaded while consent is pending")

        let receipted = Set(try String(contentsOfFile: receipts, encoding: .utf8).split(separator: "\n").compactMap { UUID(uuidString: String($0)) })
        #expect(receipted.count > 100, "the child must have logged")
        var configuration = configuration(scratch, collector: collector.url)
        configuration.appKey = "dev-key"
        let logger = try NFLogger(configuration: configuration)
        #expect(logger.consent == .pending, "saved before the kill")
        #expect(await logger.flush().error == .consentPending)
        logger.consent = .granted
        await deliverAll(logger)
        var stored: [UUID: Int] = [:]
        for id in try await storedIDs(collector) { stored[id, default: 0] += 1 }
        #expect(receipted.isSubset(of: Set(stored.keys)), "lost \(receipted.subtracting(stored.keys).count)")
        #expect(stored.values.allSatisfy { $0 == 1 })
        await logger.close()
        await collector.stop()
    }
}
