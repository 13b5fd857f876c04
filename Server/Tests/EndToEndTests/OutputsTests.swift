import CollectorTestSupport
import FaultProxy
import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
@testable import NFLogger
import Synchronization
import Testing

/// A durable output of the test's own that keeps what it is handed, and can refuse or fail.
final class KeepingOutput: DurableOutput {
    let id: String
    let pattern: String
    /// Deliveries fail (thrown, so retried) while this is set.
    let failing = Mutex(false)
    /// Events whose name is here are refused (an ``OutputRefusal``).
    let refusing: Set<String>
    private let kept = Mutex<[UUID]>([])
    private let batches = Mutex<[UUID]>([])

    init(id: String, pattern: String = "**", refusing: Set<String> = []) {
        self.id = id
        self.pattern = pattern
        self.refusing = refusing
    }

    struct Down: Error {}

    func deliver(_ batch: OutputBatch) async throws {
        if failing.withLock({ $0 }) { throw Down() }
        if let refused = batch.events.first(where: { refusing.contains($0.name) }) { throw OutputRefusal("no \(refused.name) here") }
        // The batch's JSON is the wire batch: its events are the events handed.
        let object = try JSONSerialization.jsonObject(with: batch.json) as? [String: Any]
        let listed = ((object?["events"] as? [Any])?.count ?? 0) + ((object?["aggregates"] as? [Any])?.count ?? 0)
        #expect(listed == batch.events.count)
        batches.withLock { $0.append(batch.id) }
        kept.withLock { $0 += batch.events.map(\.id) }
    }

    var ids: [UUID] { kept.withLock { $0 } }
}

/// A best-effort output of the test's own.
final class WatchingOutput: BestEffortOutput {
    let id: String
    let pattern: String
    private let seen = Mutex<[OutputEvent]>([])

    init(id: String, pattern: String = "**") {
        self.id = id
        self.pattern = pattern
    }

    func emit(_ events: [OutputEvent]) { seen.withLock { $0 += events } }
    var events: [OutputEvent] { seen.withLock { $0 } }
}

@Suite("Outputs: several destinations, each durable one exactly once")
struct OutputsTests {
    @Test("Routed to two collectors by pattern, the second down for a while: each gets its events once, rows freed only after both")
    func twoCollectorsOneDownThenBack() async throws {
        let first = try await TestCollector.start()
        let reserved = try ReservedPort()  // the second collector is down: nothing listens yet
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: first.url)
        configuration.outputs = [CollectorOutput(id: "finance", url: reserved.url.appendingPathComponent("v1/events"),
                                                 appKey: TestCollector.appKey, pattern: "checkout.**")]
        let logger = try NFLogger(configuration: configuration)
        let taps = await logEvents(logger, points: 300, prefix: "ui")
        let checkout = await logEvents(logger, points: 200, spans: 20, prefix: "checkout")
        #expect(taps.count == 300 && checkout.count == 220)

        let partial = await logger.flush()
        guard case .network? = partial.outputs["finance"]?.error else {
            Issue.record("the second collector is down: expected a network error, got \(partial)")
            return
        }
        #expect(partial.outputs["collector"]?.error == nil && partial.outputs["collector"]?.remainingEvents == 0)
        #expect(Set(try await storedIDs(first)) == taps.union(checkout))
        // The first collector has everything; the device keeps exactly what the second is owed.
        var diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 200 && diagnostics.storedSpanEvents == 20)
        let finance = try #require(diagnostics.outputs.first { $0.id == "finance" })
        #expect(finance.waiting == 220 && finance.delivered == 0 && finance.isDurable)
        #expect(diagnostics.outputs.first?.id == "collector" && diagnostics.outputs.first?.waiting == 0)

        reserved.release()
        let second = try await TestCollector.start(port: reserved.port)
        let result = await deliverAll(logger)
        #expect(result.outputs["finance"]?.error == nil)
        let atSecond = try await storedIDs(second)
        #expect(Set(atSecond) == checkout && atSecond.count == 220)
        #expect(try await storedIDs(first).count == 520)
        #expect(try await first.stats().duplicatesDropped == 0)
        #expect(try await second.stats().duplicatesDropped == 0)
        diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.storedSpanEvents == 0)
        #expect(diagnostics.outputs.first { $0.id == "finance" }?.delivered == 220)
        await logger.close()
        await first.stop()
        await second.stop()
    }

    @Test("The collector down, another durable output up: rows wait for the collector, then leave; nothing twice")
    func collectorDownOtherUp() async throws {
        let reserved = try ReservedPort()
        let scratch = TemporaryDirectory()
        let archive = KeepingOutput(id: "archive")
        var configuration = configuration(scratch, collector: reserved.url)
        configuration.outputs = [archive]
        let logger = try NFLogger(configuration: configuration)
        let recorded = await logEvents(logger, points: 400, spans: 10)
        let partial = await logger.flush()
        guard case .network? = partial.error else {
            Issue.record("the collector is down: expected its network error first, got \(partial)")
            return
        }
        #expect(partial.outputs["archive"]?.error == nil)
        #expect(Set(archive.ids) == recorded && archive.ids.count == 410)
        #expect(await logger.diagnostics().storedPointEvents == 400)

        reserved.release()
        let collector = try await TestCollector.start(port: reserved.port)
        await deliverAll(logger)
        let stored = try await storedIDs(collector)
        #expect(Set(stored) == recorded && stored.count == 410)
        #expect(archive.ids.count == 410)  // not handed again
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.storedSpanEvents == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("A JSON-lines file output beside the collector: the file holds each matching event once, as the wire's JSON")
    func fileOutput() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let directory = scratch.url.appendingPathComponent("jsonl")
        var configuration = configuration(scratch, collector: collector.url)
        configuration.outputs = [JSONLinesOutput(directory: directory, pattern: "net.**", maxFileBytes: 16_384)]
        configuration.upload.batchMaxEvents = 40  // batches smaller than a file: the files rotate
        let logger = try NFLogger(configuration: configuration)
        let taps = await logEvents(logger, points: 100, prefix: "ui")
        let requests = await logEvents(logger, points: 300, spans: 30, prefix: "net")
        await deliverAll(logger)
        var lines: [[String: Any]] = []
        var files = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".jsonl") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                lines.append(try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
            }
            #expect(try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(file).path)[.size] as? Int ?? .max <= 16_384)
            files += 1
        }
        #expect(files > 1)
        let ids = lines.compactMap { ($0["uuid"] as? String).flatMap(UUID.init(uuidString:)) }
        #expect(ids.count == 330 && Set(ids) == requests)
        #expect(lines.allSatisfy { ($0["name"] as? String)?.hasPrefix("net.") == true })
        #expect(Set(try await storedIDs(collector)) == taps.union(requests))
        #expect(await logger.diagnostics().storedPointEvents == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("An output failing then back gets the same batches again, and nothing twice once they succeed")
    func failingOutputRetriesSameBatch() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let archive = KeepingOutput(id: "archive")
        archive.failing.withLock { $0 = true }
        var configuration = configuration(scratch, collector: collector.url)
        configuration.outputs = [archive]
        let logger = try NFLogger(configuration: configuration)
        let recorded = await logEvents(logger, points: 250)
        let failed = await logger.flush()
        #expect(failed.outputs["archive"]?.error != nil && failed.outputs["archive"]?.remainingEvents == 250)
        #expect(failed.outputs["collector"]?.error == nil)
        #expect(archive.ids.isEmpty)
        archive.failing.withLock { $0 = false }
        await deliverAll(logger)
        #expect(archive.ids.count == 250 && Set(archive.ids) == recorded)
        #expect(await logger.diagnostics().outputs.first { $0.id == "archive" }?.retries ?? 0 >= 1)
        await logger.close()
        await collector.stop()
    }

    @Test("A refused event is quarantined for that output only; the collector still gets it")
    func refusalQuarantinesForOneOutput() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let strict = KeepingOutput(id: "strict", refusing: ["bad.one"])
        var configuration = configuration(scratch, collector: collector.url)
        configuration.outputs = [strict]
        let logger = try NFLogger(configuration: configuration)
        let good = await logEvents(logger, points: 30, prefix: "good")
        let refused = await record(logger, "bad.one")
        await deliverAll(logger)
        #expect(Set(strict.ids) == good)
        #expect(!strict.ids.contains(refused))
        #expect(Set(try await storedIDs(collector)).contains(refused))
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 0)
        #expect(diagnostics.quarantinedEvents == 1)  // kept aside, with the output's reason
        await logger.close()
        await collector.stop()
    }

    @Test("Best-effort outputs are handed what they match, after the write; durable routing leaves out what no output takes")
    func bestEffortAndNoOutput() async throws {
        let scratch = TemporaryDirectory()
        let watcher = WatchingOutput(id: "console", pattern: "ui.*")
        let archive = KeepingOutput(id: "archive", pattern: "ui.**")
        var configuration = Configuration(databaseURL: scratch.databaseURL, appID: "com.example.e2e", appVersion: "1.0")
        configuration.outputs = [archive, watcher]
        let logger = try NFLogger(configuration: configuration)
        let tap = await record(logger, "ui.tap")
        let status = await logger.logEvent(name: "net.request", parameters: [:])
        #expect(status == .filtered(.noOutput))
        let deadline = ContinuousClock.now + hangLimit
        while watcher.events.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(watcher.events.map(\.id) == [tap])
        #expect(watcher.events.first?.json.contains("\"name\":\"ui.tap\"") == true)
        await deliverAll(logger)
        #expect(archive.ids == [tap])
        let outputs = await logger.diagnostics().outputs
        #expect(outputs.map(\.id) == ["archive", "console"])
        #expect(outputs.last?.delivered == 1 && outputs.last?.isDurable == false)
        await logger.close()
    }

    @Test("A policy switches an output off: it sends nothing and is owed nothing new; back on, it sends what it was owed")
    func disabledByPolicy() async throws {
        let policies = PolicyDirectory()
        try policies.serve(#"{"version": 1, "mode": "active", "outputs": {"disabled": ["archive"]}}"#)
        let collector = try await startCollector(policies)
        let scratch = TemporaryDirectory()
        let archive = KeepingOutput(id: "archive")
        var configuration = policyConfiguration(scratch, collector)
        configuration.outputs = [archive]
        let logger = try NFLogger(configuration: configuration)
        let before = await logEvents(logger, points: 20, prefix: "before")  // may go before the policy arrives
        _ = await settledPolicy(logger)
        let during = await logEvents(logger, points: 30, prefix: "during")
        let flushed = await logger.flush()
        #expect(flushed.outputs["archive"]?.error == .outputDisabled)
        #expect(flushed.error == nil || flushed.error == .outputDisabled)
        #expect(Set(try await storedIDs(collector)) == before.union(during))
        #expect(archive.ids.isEmpty)
        #expect(await logger.diagnostics().outputs.first { $0.id == "archive" }?.isEnabled == false)

        try policies.serve(#"{"version": 1, "mode": "active"}"#)
        #expect(await logger.refreshPolicy() == .applied)
        await deliverAll(logger)
        // What it was owed before the switch went; nothing logged while it was off.
        #expect(Set(archive.ids) == before)
        #expect(await logger.diagnostics().storedPointEvents == 0)
        await logger.close()
        await collector.stop()
    }

    @Test("Removing an output from the configuration gives up what it was owed, at the next start; the others keep theirs")
    func removedOutputForgotten() async throws {
        let scratch = TemporaryDirectory()
        let reserved = try ReservedPort()  // the collector never answers
        let archive = KeepingOutput(id: "archive", pattern: "keep.**")
        archive.failing.withLock { $0 = true }
        var first = configuration(scratch, collector: reserved.url)
        first.outputs = [archive, KeepingOutput(id: "gone")]
        var logger = try NFLogger(configuration: first)
        let kept = await logEvents(logger, points: 10, prefix: "keep")
        _ = await logEvents(logger, points: 15, prefix: "drop")
        #expect(await logger.diagnostics().storedPointEvents == 25)
        await logger.close()

        // Now only the archive: neither the collector (no upload URL) nor "gone" is owed anything.
        let later = KeepingOutput(id: "archive", pattern: "keep.**")
        var second = Configuration(databaseURL: scratch.databaseURL, appID: "com.example.e2e", appVersion: "1.0")
        second.outputs = [later]
        logger = try NFLogger(configuration: second)
        #expect(await logger.diagnostics().storedPointEvents == 10)
        await deliverAll(logger)
        #expect(Set(later.ids) == kept && later.ids.count == 10)
        #expect(await logger.diagnostics().storedPointEvents == 0)
        await logger.close()
        _ = reserved
    }

    @Test("The rolling database counts an event once however many outputs want it, and reports drops per output")
    func pruningPerOutput() async throws {
        let scratch = TemporaryDirectory()
        let reserved = try ReservedPort()
        let archive = KeepingOutput(id: "archive")
        archive.failing.withLock { $0 = true }
        var configuration = configuration(scratch, collector: reserved.url)
        configuration.outputs = [archive]
        configuration.limits.maxStoredEvents = 100
        let logger = try NFLogger(configuration: configuration)
        _ = await logEvents(logger, points: 150)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 100)
        #expect(diagnostics.prunedEvents == 50)
        let pruned = Dictionary(uniqueKeysWithValues: diagnostics.outputs.map { ($0.id, $0.pruned) })
        #expect(pruned == ["collector": 50, "archive": 50])
        await logger.close()
        _ = reserved
    }
}

/// Logs one point event and returns its id.
func record(_ logger: NFLogger, _ name: String) async -> UUID {
    let status = await logger.logEvent(name: name, parameters: ["n": 1])
    guard case .recorded(let id) = status else {
        Issue.record("\(name) not recorded: \(status)")
        return UUID()
    }
    return id
}
