import CollectorTestSupport
import FaultProxy
import Foundation
import NFLogCollector
import NFLogCollectorTesting
import NFLogger
@_spi(NFLogShared) import NFLogSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs the `nflog-crash-child` executable, built beside the test bundle.
enum Child {
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("nflog-crash-child")

    /// Starts the crash child (or another executable) with its standard output in a pipe.
    static func start(_ arguments: [String], executable: URL = Child.executable) throws -> (process: ChildProcess, output: Pipe) {
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// Runs to completion and parses the JSON object it prints last. The wait happens on a
    /// Dispatch thread: the test suites run in parallel on Swift's cooperative pool (two threads
    /// here), and a child running for seconds must not hold one of them, or every other test's
    /// async work (uploads, timeouts, collectors) starves behind it.
    static func run(_ arguments: [String]) async throws -> (status: Int32, json: [String: Any]) {
        let (process, output) = try start(arguments)
        let data = await offPool { () -> Data in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        let json = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
        return (process.terminationStatus, json)
    }

    /// The first line a child writes to `pipe` (a collector's "listening on …"), read byte by byte
    /// off Swift's pool so nothing past the line is consumed; empty if it exits first.
    static func firstLine(of pipe: Pipe) async -> String {
        await offPool { () -> String in
            var line: [UInt8] = []
            while let byte = try? pipe.fileHandleForReading.read(upToCount: 1), let character = byte.first, character != 10 {
                line.append(character)
            }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// Runs blocking work on a Dispatch thread and waits for it without blocking this one.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in DispatchQueue.global().async { done.resume(returning: work()) } }
    }
}

@Suite("Durability: kill -9, a full disk, a million events offline", .serialized)
struct DurabilityTests {
    @Test("1,000,000 events offline with a 50,000-row limit: the database stays within it, memory stays bounded, the newest 50,000 arrive with the prune counts")
    func millionOffline() async throws {
        let scratch = TemporaryDirectory()
        // A port where nothing listens now and the collector will listen later.
        let reserved = try ReservedPort()
        let port = reserved.port
        let url = reserved.url.absoluteString

        let small = try await Child.run(["offline", "--db", scratch.url.appendingPathComponent("small.sqlite").path,
                                   "--collector", url, "--max-rows", "50000", "--events", "100000"])
        let run = try await Child.run(["offline", "--db", scratch.databaseURL.path, "--collector", url,
                                 "--max-rows", "50000", "--events", "1000000"])
        #expect(run.status == 0)
        #expect(run.json["recorded"] as? Int == 1_000_000)
        // Rows in a formed batch are not counted against the limit until an answer settles the
        // batch (here none comes: nothing listens), and never pruned: the device may hold the
        // batches formed before every upload waited (at most 2 × 2 concurrent uploads + 1, of
        // 100 events each) beyond it, and sends them later.
        let stored = run.json["stored"] as? Int ?? -1, pruned = run.json["pruned"] as? Int ?? -1
        #expect((50_000...50_500).contains(stored) && stored + pruned == 1_000_000, "stored \(stored), pruned \(pruned)")
        let peak = run.json["peak_rss_kb"] as? Int ?? .max
        let smallPeak = small.json["peak_rss_kb"] as? Int ?? 0
        // Bounded: ten times the events may not cost much more memory than a tenth of them did.
        // (Uncontended, a debug build peaks near 45 MB for either; a loaded machine adds allocator slack.)
        #expect(peak < 192 * 1024, "peak RSS \(peak) KB")
        #expect(Double(peak) < Double(smallPeak) * 2, "peak RSS \(peak) KB for 1M vs \(smallPeak) KB for 100k")
        print("millionOffline: peak RSS \(peak) KB for 1,000,000 events (\(smallPeak) KB for 100,000)")

        reserved.release()
        let collector = try await TestCollector.start(port: port)
        let flush = try await Child.run(["flush", "--db", scratch.databaseURL.path, "--collector", url])
        #expect(flush.status == 0 && flush.json["remaining"] as? Int == 0, "\(flush.json)")
        let stats = try await collector.stats()
        // Every event is either at the collector or counted as pruned, once.
        #expect((50_000...50_500).contains(stats.eventsStored) && stats.eventsStored + stats.prunedOnDevices == 1_000_000,
                "stored \(stats.eventsStored), pruned \(stats.prunedOnDevices)")
        #expect(stats.prunedOnDevicesByName == ["offline.point": stats.prunedOnDevices])
        let indices = try await collector.exportedEvents().compactMap { exported -> Int64? in
            if case .integer(let index)? = exported.event.parameters["index"] { index } else { nil }
        }
        // The newest 50,000 all arrive; the rest are the formed batches' (older) events.
        #expect(indices.count == stats.eventsStored && Set(indices.filter { $0 >= 950_000 }).count == 50_000,
                "\(indices.count) indices, \(indices.min() ?? -1)…\(indices.max() ?? -1)")
        await collector.stop()
    }

    @Test("A damaged database is reported to the collector as a reset", arguments: StoreKind.all)
    func resetReported(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let scratch = TemporaryDirectory()
        try Data("not a database".utf8).write(to: scratch.databaseURL)
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        #expect(await logger.logEvent(name: "after.reset").isRecorded)
        await deliverAll(logger)
        let stats = try await collector.stats()
        #expect(stats.databaseResets == 1 && stats.eventsStored == 1)
        await logger.close()
        await collector.stop()
    }

    @Test("A full disk (a file-size limit): calls fail with a storage error, nothing crashes, logging resumes when space returns")
    func fullDisk() async throws {
        let scratch = TemporaryDirectory()
        let run = try await Child.run(["fill", "--db", scratch.databaseURL.path, "--file-size-limit", "600000"])
        #expect(run.status == 0, "the child must not crash")
        let before = run.json["recorded_before"] as? Int ?? -1
        let failures = run.json["storage_failures"] as? Int ?? -1
        #expect(failures > 0, "the limit must have been hit: \(run.json)")
        #expect(run.json["other_failures"] as? Int == 0)
        #expect(run.json["recorded_after"] as? Int == 100, "logging resumes by itself")
        #expect(run.json["stored"] as? Int == before + 100, "every event reported recorded is stored: \(run.json)")
        print("fullDisk: \(before) recorded, then \(failures) storage failures, then 100 recorded after the space came back")
    }

    @Test("kill -9 at random moments, during logging and uploads: every receipted event is stored by the collector exactly once (straight to it, and through a proxy faulting 20% of uploads)",
          arguments: [false, true])
    func killNine(throughFaultProxy: Bool) async throws {
        let trials = Int(ProcessInfo.processInfo.environment["NFLOG_KILL_TRIALS"] ?? "") ?? 20
        let collector = try await TestCollector.start()
        let proxy = throughFaultProxy ? try await FaultProxy.start(before: collector, rate: 0.2, seed: 9) : nil
        let scratch = TemporaryDirectory()
        let receipts = scratch.url.appendingPathComponent("receipts.txt").path
        let arguments = ["--db", scratch.databaseURL.path, "--collector", (proxy?.url ?? collector.url).absoluteString,
                         "--max-rows", "10000000", "--request-timeout-ms", "1000"]
        var random = SeededRandom(seed: UInt64(ProcessInfo.processInfo.environment["NFLOG_KILL_SEED"] ?? "") ?? 7)
        let clock = ContinuousClock(), started = clock.now
        for _ in 0..<trials {
            let before = receiptCount(receipts)
            // Paced (at most 5 points per 2 ms): a kill lands as often during an upload, with a
            // backlog the flush through the faulty proxy delivers in seconds, not minutes.
            let (child, output) = try Child.start(["log", "--receipts", receipts, "--pause-every", "10"] + arguments)
            _ = await Child.offPool { output.fileHandleForReading.availableData }  // "ready": the logger exists
            // Some progress first (however slow the machine), then a random moment.
            try await waitForReceipts(receipts, atLeast: before + 150)
            try await Task.sleep(for: .microseconds(random.next() % 370_000))
            kill(child.processIdentifier, SIGKILL)
            await Child.offPool { child.waitUntilExit() }
            #expect(child.terminationReason == .uncaughtSignal)
        }
        let duringTrials = try await collector.stats()
        let trialsTook = clock.now - started, flushStarted = clock.now
        let flush = try await Child.run(["flush"] + arguments)
        let flushTook = clock.now - flushStarted
        #expect(flush.status == 0 && flush.json["remaining"] as? Int == 0, "\(flush.json)")

        let lines = try String(contentsOfFile: receipts, encoding: .utf8).split(separator: "\n")
        let receipted = Set(lines.compactMap { UUID(uuidString: String($0)) })
        let partial = lines.count - lines.filter { UUID(uuidString: String($0)) != nil }.count
        var stored: [UUID: Int] = [:]
        for event in try await collector.exportedEvents() {
            stored[event.event.id, default: 0] += 1
        }
        let lost = receipted.filter { stored[$0] == nil }.count
        let duplicated = stored.values.filter { $0 > 1 }.count
        let stats = try await collector.stats()
        let counts = proxy?.counts()
        await proxy?.shutdown()
        print("killNine\(counts.map { " through the fault proxy (\($0))" } ?? ""): \(trials) trials, \(receipted.count) events receipted (\(partial) partial lines), \(stored.count) stored, lost \(lost), duplicated \(duplicated); \(duringTrials.requests) upload requests during the trials, \(stats.duplicatesDropped) re-sent events dropped by the collector, \(stats.abandonedSpans) spans abandoned; trials took \(trialsTook), the flush \(flushTook)")
        #expect(receipted.count > trials * 100, "the children must have logged")
        #expect(partial <= trials, "at most one receipt line cut by each kill")
        #expect(lost == 0)
        #expect(duplicated == 0)
        #expect(duringTrials.requests > 0, "uploads ran while children were killed")
        #expect(stats.abandonedSpans > 0, "spans open at a kill are closed as abandoned and reported")
        await collector.stop()
    }

    @Test("kill -9 while delivering to two collectors: every receipted event is stored once by each, and the device keeps nothing after")
    func killNineTwoCollectors() async throws {
        let trials = Int(ProcessInfo.processInfo.environment["NFLOG_KILL_TRIALS"] ?? "") ?? 8
        let first = try await TestCollector.start()
        let second = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let receipts = scratch.url.appendingPathComponent("receipts.txt").path
        let arguments = ["--db", scratch.databaseURL.path, "--collector", first.url.absoluteString,
                         "--second-collector", second.url.absoluteString, "--max-rows", "10000000", "--request-timeout-ms", "1000"]
        var random = SeededRandom(seed: 11)
        for _ in 0..<trials {
            let before = receiptCount(receipts)
            let (child, output) = try Child.start(["log", "--receipts", receipts] + arguments)
            _ = await Child.offPool { output.fileHandleForReading.availableData }
            try await waitForReceipts(receipts, atLeast: before + 150)
            try await Task.sleep(for: .microseconds(random.next() % 370_000))
            kill(child.processIdentifier, SIGKILL)
            await Child.offPool { child.waitUntilExit() }
            #expect(child.terminationReason == .uncaughtSignal)
        }
        let duringTrials = (try await first.stats().requests, try await second.stats().requests)
        let flush = try await Child.run(["flush"] + arguments)
        #expect(flush.status == 0 && flush.json["remaining"] as? Int == 0 && flush.json["stored_rows"] as? Int == 0, "\(flush.json)")

        let lines = try String(contentsOfFile: receipts, encoding: .utf8).split(separator: "\n")
        let receipted = Set(lines.compactMap { UUID(uuidString: String($0)) })
        for (name, collector) in [("first", first), ("second", second)] {
            var stored: [UUID: Int] = [:]
            for event in try await collector.exportedEvents() { stored[event.event.id, default: 0] += 1 }
            let lost = receipted.filter { stored[$0] == nil }.count
            let duplicated = stored.values.filter { $0 > 1 }.count
            print("killNineTwoCollectors, \(name) collector: \(trials) trials, \(receipted.count) receipted, \(stored.count) stored, lost \(lost), duplicated \(duplicated), \(try await collector.stats().duplicatesDropped) re-sent events dropped")
            #expect(lost == 0 && duplicated == 0, "\(name) collector")
        }
        #expect(receipted.count > trials * 100, "the children must have logged")
        #expect(duringTrials.0 > 0 && duringTrials.1 > 0, "both outputs uploaded while children were killed")
        await first.stop()
        await second.stop()
    }

    @Test("kill -9 while folding into aggregates: every aggregate a completion named reaches the collector once, holding at least the events it receipted")
    func killNineWhileFolding() async throws {
        let trials = 6
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        let receipts = scratch.url.appendingPathComponent("receipts.txt").path
        let arguments = ["--db", scratch.databaseURL.path, "--collector", collector.url.absoluteString,
                         "--max-rows", "10000000", "--request-timeout-ms", "1000", "--aggregate", "crash.frame"]
        var random = SeededRandom(seed: 11)
        for _ in 0..<trials {
            let (child, output) = try Child.start(["fold", "--receipts", receipts] + arguments)
            _ = await Child.offPool { output.fileHandleForReading.availableData }  // "ready"
            // Nothing closes an aggregate early in a child (no flush, suspend or close), so
            // aggregates stay open across the kill and the next child folds into them.
            try await Task.sleep(for: .microseconds(30_000 + random.next() % 800_000))
            kill(child.processIdentifier, SIGKILL)
            await Child.offPool { child.waitUntilExit() }
            #expect(child.terminationReason == .uncaughtSignal)
        }
        // The flush closes what has been open a second or more; wait for that second.
        try await Task.sleep(for: .milliseconds(1_100))
        let flush = try await Child.run(["flush"] + arguments)
        #expect(flush.status == 0 && flush.json["remaining"] as? Int == 0, "\(flush.json)")

        let lines = try String(contentsOfFile: receipts, encoding: .utf8).split(separator: "\n")
        var receipted: [UUID: Int] = [:]
        for line in lines { if let id = UUID(uuidString: String(line)) { receipted[id, default: 0] += 1 } }
        var stored: [UUID: Int] = [:]
        var copies: [UUID: Int] = [:]
        for aggregate in try await collector.exportedAggregates() {
            stored[aggregate.uuid] = aggregate.count
            copies[aggregate.uuid, default: 0] += 1
        }
        let lost = receipted.filter { (stored[$0.key] ?? 0) < $0.value }
        print("killNineWhileFolding: \(trials) trials, \(receipted.values.reduce(0, +)) folded events receipted in \(receipted.count) aggregates; \(stored.count) aggregates stored holding \(stored.values.reduce(0, +)) events; short \(lost.count)")
        #expect(receipted.values.reduce(0, +) > trials * 100, "the children must have folded")
        #expect(lost.isEmpty, "aggregates holding fewer events than were receipted: \(lost)")
        #expect(copies.values.allSatisfy { $0 == 1 })
        #expect(stored.values.reduce(0, +) >= receipted.values.reduce(0, +))
        await collector.stop()
    }
}
