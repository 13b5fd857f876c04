import CSQLite
import Foundation
@_spi(NFLogShared) import NFLogSupport
import Testing
@testable import NFLogger
import NFLoggerTesting
import NFLogTestSupport

@Suite("The rolling database")
struct PrunerTests {
    func log(_ logger: NFLogger, _ count: Int, name: String = "roll.event", from start: Int = 0) async {
        for index in start..<(start + count) {
            _ = await logger.logEvent(name: name, parameters: ["index": index, "pad": String(repeating: "p", count: 100)])
        }
    }

    func prunedCounts(_ url: URL) throws -> [String: Int64] {
        let rows = try DatabaseReader(url).rows("SELECT name, count FROM pruned_counts")
        return Dictionary(uniqueKeysWithValues: rows.map { ($0["name"] as? String ?? "", $0["count"] as? Int64 ?? 0) })
    }

    @Test("Past the row limit the oldest go; what stays is exactly the limit, the newest; the drops are counted by name")
    func rowLimit() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxStoredEvents = 100
        let logger = try NFLogger(configuration: configuration)
        await log(logger, 350)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 100)
        #expect(diagnostics.prunedEvents == 250)
        await logger.close()
        let indices = try DatabaseReader(directory.databaseURL)
            .rows("SELECT json_extract(parameters, '$.index') AS i FROM point_events ORDER BY id").compactMap { $0["i"] as? Int64 }
        #expect(indices == Array(250..<350).map(Int64.init))
        #expect(try prunedCounts(directory.databaseURL) == ["roll.event": 250])
    }

    @Test("A batch whose answer was lost is kept whole until an answer settles it: never pruned past the limit, never re-formed; it goes again with the same id, events and prune counts")
    func waitingBatchKeptWhole() async throws {
        let transport = RecordingTransport()
        var configuration = transport.configuration()
        configuration.limits.maxStoredEvents = 100
        configuration.upload.countThreshold = 1_000_000  // uploads only when the test flushes
        configuration.upload.interval = 3600
        configuration.upload.batchMaxEvents = 50
        configuration.upload.maxConcurrentUploads = 1
        // Time stands still: the lost batch's backoff ends when the test moves the clock.
        let clock = ManualClock()
        let logger = try NFLogger(configuration: configuration, clock: clock)
        await log(logger, 150)  // 50 pruned, waiting to be told
        transport.enqueue(.networkError)  // the first batch's answer is lost: the collector may have it
        _ = await logger.flush()
        let lost = try #require(transport.batches.first)
        #expect(lost.events.count == 50 && lost.prunedEvents == ["roll.event": 50])

        // Past the limit again: the lost batch's rows stay (beyond the limit), the others go.
        await log(logger, 200, from: 150)
        #expect(await logger.diagnostics().storedPointEvents >= 150)

        var result = await logger.flush()
        for _ in 0..<20 where result.remainingEvents > 0 || result.error != nil {
            clock.advance(configuration.upload.maxBackoff)
            result = await logger.flush()
        }
        #expect(result.remainingEvents == 0 && result.error == nil, "\(result)")
        await logger.close()

        let batches = transport.batches
        let again = batches.dropFirst().filter { $0.id == lost.id }
        #expect(again.count == 1, "sent again under its own id")
        #expect(again.first?.events.map(\.id) == lost.events.map(\.id) && again.first?.prunedEvents == lost.prunedEvents,
                "the same events and prune counts")
        // What a collector counts (each batch id's counts once) is what the pruner deleted.
        var byBatch: [UUID: [String: Int64]] = [:]
        for batch in batches where batch.isAccepted { byBatch[batch.id] = batch.prunedEvents }
        let counted = byBatch.values.reduce(0) { $0 + ($1["roll.event"] ?? 0) }
        let deleted = try DatabaseReader(configuration.databaseURL).int("SELECT coalesce(sum(count), 0) FROM pruned_totals")
        #expect(counted == Int64(deleted) && deleted > 50)
        // Every event was either delivered or pruned, never both.
        #expect(transport.events.count + deleted == 350)
    }

    @Test("With policy priorities, the lowest priority goes first, then the oldest")
    func priorities() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxStoredEvents = 150
        configuration.policyOptions.fallback = try Policy.parse(Data(#"{"version":1,"mode":"active","rules":{"priorities":[{"pattern":"ui.scroll","priority":-1}]}}"#.utf8))
        let logger = try NFLogger(configuration: configuration)
        await log(logger, 100, name: "app.first")
        await log(logger, 100, name: "ui.scroll")
        await log(logger, 100, name: "app.second")
        await logger.close()
        #expect(try prunedCounts(directory.databaseURL) == ["ui.scroll": 100, "app.first": 50])
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.int("SELECT count(*) FROM point_events WHERE name = 'app.first' AND json_extract(parameters, '$.index') >= 50") == 50)
        #expect(try reader.int("SELECT count(*) FROM point_events WHERE name = 'app.second'") == 100)
    }

    @Test("Events older than the age limit go at the periodic pass")
    func ageLimit() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        var configuration = directory.configuration()
        configuration.limits.maxEventAge = 30 * 86_400
        let logger = try NFLogger(configuration: configuration, clock: clock)
        await log(logger, 10, name: "old.event")
        clock.advance(31 * 86_400)
        await log(logger, 5, name: "new.event")
        logger.requests.maintain()
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 5 && diagnostics.prunedEvents == 10)
        await logger.close()
        #expect(try prunedCounts(directory.databaseURL) == ["old.event": 10])
    }

    @Test("The byte limit (database plus log) holds; the newest events stay")
    func byteLimit() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxDatabaseBytes = 512 * 1024
        let logger = try NFLogger(configuration: configuration)
        for index in 0..<1_500 {
            _ = await logger.logEvent(name: "big.event", parameters: ["index": index, "pad": String(repeating: "b", count: 1_000)])
        }
        logger.requests.maintain()
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.prunedEvents > 0)
        let path = directory.databaseURL.path
        let size = { (suffix: String) in (try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? 0 }
        #expect(size("") + size("-wal") <= 512 * 1024, "\(size("")) + \(size("-wal")) bytes")
        await logger.close()
        let newest = try DatabaseReader(directory.databaseURL).int("SELECT max(json_extract(parameters, '$.index')) FROM point_events")
        #expect(newest == 1_499)
    }

    @Test("Spans left open by a process that stopped without closing are abandoned at the next start, ending at its last activity")
    func abandonedAfterCrash() async throws {
        let directory = TemporaryDirectory()
        do {
            let first = try NFLogger(configuration: directory.configuration())
            #expect(await first.logEvent(name: "warm.up").isRecorded)
            await first.close()
        }
        // What a killed process leaves behind: its epoch still registered, a span still open,
        // and a later point event in the same session.
        let connection = try SQLiteConnection(path: directory.databaseURL.path, busyTimeoutMilliseconds: 1_000)
        try connection.execute("""
            INSERT INTO open_epochs (epoch, pid, opened_ms) VALUES (42, \(getpid()), 0);
            INSERT INTO span_events (uuid, session_id, name, type, start_ms, start_mono_ns, clock_epoch)
                VALUES (randomblob(16), 1, 'screen.lost', 'event', \(Int64(Date().timeIntervalSince1970 * 1000) + 10_000), 0, 42);
            INSERT INTO point_events (uuid, session_id, name, type, timestamp_ms)
                VALUES (randomblob(16), 1, 'ui.tap', 'event', \(Int64(Date().timeIntervalSince1970 * 1000) + 13_000));
            """)
        let second = try NFLogger(configuration: directory.configuration())
        let diagnostics = await second.diagnostics()
        #expect(diagnostics.abandonedSpans == 1 && diagnostics.openSpans == 0)
        await second.close()
        let span = try #require(try DatabaseReader(directory.databaseURL).rows("SELECT * FROM span_events WHERE name = 'screen.lost'").first)
        #expect(span["abandoned"] as? Int64 == 1)
        let start = try #require(span["start_ms"] as? Int64)
        #expect(span["end_ms"] as? Int64 == start + 3_000)  // the later tap: the last known activity
        #expect(span["duration_ns"] as? Int64 == 3_000_000_000)
    }

    @Test("Abandoning the spans a crash left open is one pass over the events, not one per span: twice the rows and spans, twice the work")
    func abandoningScalesWithRows() async throws {
        // SQLite's virtual-machine steps, counted by its progress handler: a count of work, not a
        // time, so it is the same on a busy machine. A scan per open span would make it ~4×.
        let small = try await abandoningSteps(openSpans: 200, pointEvents: 20_000)
        let large = try await abandoningSteps(openSpans: 400, pointEvents: 40_000)
        #expect(small.abandoned == 200 && large.abandoned == 400)
        let ratio = Double(large.steps) / Double(small.steps)
        #expect(ratio < 2.5, "\(small.steps) steps, then \(large.steps) for twice the rows and spans (×\(ratio))")
    }

    /// Leaves what a killed process leaves (its epoch registered, spans open among point events
    /// in its session), then counts the steps the pruner takes to abandon them.
    func abandoningSteps(openSpans: Int, pointEvents: Int) async throws -> (abandoned: Int, steps: Int) {
        let directory = TemporaryDirectory()
        let first = try NFLogger(configuration: directory.configuration())
        #expect(await first.logEvent(name: "warm.up").isRecorded)
        await first.close()
        let connection = try SQLiteConnection(path: directory.databaseURL.path, busyTimeoutMilliseconds: 1_000)
        try connection.execute("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(pointEvents))
            INSERT INTO point_events (uuid, session_id, name, type, timestamp_ms)
                SELECT randomblob(16), 1, 'ui.tap', 'event', 1900000000000 + i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(openSpans))
            INSERT INTO span_events (uuid, session_id, name, type, start_ms, start_mono_ns, clock_epoch)
                SELECT randomblob(16), 1, 'screen.lost', 'event', 1900000000000 + i, 0, 42 FROM n;
            """)
        let pruner = try Pruner(connection: connection, path: directory.databaseURL.path)
        let steps = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        steps.initialize(to: 0)
        defer { steps.deallocate() }
        sqlite3_progress_handler(connection.handle, 16, { context in
            context?.assumingMemoryBound(to: Int.self).pointee += 1
            return 0
        }, steps)
        let abandoned = try pruner.abandonSpans(ofEpochs: [42], olderThan: .min)
        sqlite3_progress_handler(connection.handle, 0, nil, nil)
        let ended = try connection.scalarInt("SELECT count(*) FROM span_events WHERE abandoned = 1 AND end_ms = 1900000000000 + \(pointEvents)")
        #expect(ended == Int64(openSpans), "each ends at the session's last activity, the newest tap")
        return (abandoned, steps.pointee)
    }

    @Test("A span open past the timeout is abandoned; ending it later fails and changes nothing")
    func abandonedAfterTimeout() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        var configuration = directory.configuration()
        configuration.limits.spanTimeout = 60
        let logger = try NFLogger(configuration: configuration, clock: clock)
        let (span, _) = await logger.startEvent(name: "screen.forgotten")
        let (kept, _) = await logger.startEvent(name: "screen.recent")
        clock.advance(30)
        let (fresh, _) = await logger.startEvent(name: "screen.fresh")
        clock.advance(31)
        logger.requests.maintain()
        #expect(await logger.diagnostics().abandonedSpans == 2)
        #expect(await span.end() == .failed(.spanAlreadyEnded(span.id)))
        #expect(await kept.end() == .failed(.spanAlreadyEnded(kept.id)))
        #expect(await fresh.end() == .recorded(fresh.id))
    }

    /// Damaged files: each is moved aside, a fresh database works, and the reset is noted.
    enum Damage: String, CaseIterable, Sendable {
        case garbage, truncated, notSQLite

        func apply(to url: URL) throws {
            switch self {
            case .garbage:
                var bytes = [UInt8](repeating: 0, count: 64 * 1024)
                var generator = SystemRandomNumberGenerator()
                for index in bytes.indices { bytes[index] = generator.next() }
                try Data(bytes).write(to: url)
            case .truncated:
                let data = try Data(contentsOf: url)
                try data.prefix(data.count / 2).write(to: url)
            case .notSQLite:
                try Data("these are not the bytes you are looking for\n".utf8).write(to: url)
            }
        }
    }

    @Test("A damaged database is moved aside with a timestamp, a fresh one works, and the reset is noted", arguments: Damage.allCases)
    func damaged(damage: Damage) async throws {
        let directory = TemporaryDirectory()
        do {
            let first = try NFLogger(configuration: directory.configuration())
            for index in 0..<300 { _ = await first.logEvent(name: "before.damage", parameters: ["index": index, "pad": String(repeating: "d", count: 200)]) }
            await first.close()
        }
        try damage.apply(to: directory.databaseURL)
        let logger = try NFLogger(configuration: directory.configuration())
        #expect(await logger.logEvent(name: "after.damage").isRecorded)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 1)
        await logger.close()
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("events.sqlite.corrupt-") && !$0.hasSuffix("-wal") }
        #expect(aside.count == 1, "\(aside)")
        let note = try #require(try DatabaseReader(directory.databaseURL).rows("SELECT kind, detail FROM device_notes").first)
        #expect(note["kind"] as? String == "database_reset")
        #expect((note["detail"] as? String)?.contains("moved aside to events.sqlite.corrupt-") == true)
    }

    @Test("A database another process holds: calls wait the busy timeout, then fail clearly; nothing reported recorded is lost",
          .enabled(if: PythonCheck.available, "needs python3 to hold the lock from another process"))
    func busyFromAnotherProcess() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.busyTimeout = 0.3
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.logEvent(name: "before.lock").isRecorded)

        // Held until the test lets go, not for a while: on a loaded machine the call may come
        // after any fixed while has ended.
        let holder = try await PythonCheck.holdLock(on: directory.databaseURL.path)
        let started = ContinuousClock.now
        let status = await logger.logEvent(name: "during.lock")
        await holder.release()
        guard case .failed(.storage(let error)) = status else {
            Issue.record("expected a busy failure, got \(status)")
            return
        }
        #expect(error.primaryCode == 5)  // SQLITE_BUSY
        #expect(ContinuousClock.now - started >= .milliseconds(250))
        #expect(await logger.logEvent(name: "after.lock").isRecorded)
        await logger.close()
        let names = try DatabaseReader(directory.databaseURL).rows("SELECT name FROM point_events ORDER BY id").compactMap { $0["name"] as? String }
        #expect(names == ["before.lock", "after.lock"])
    }
}

/// Another process, for the lock test: Python's sqlite3 holding an exclusive transaction.
/// Started with ``ChildProcess``, not Foundation's `Process`, whose `run()` can crash the test
/// process on this toolchain (see ``ChildProcess``).
enum PythonCheck {
    static let available: Bool = {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import sqlite3"]
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// Starts a process that takes the write lock, says "locked", holds it for `seconds`, then exits.
    /// A process holding an exclusive lock on the database at `path` until ``LockHolder/release()``.
    static func holdLock(on path: String) async throws -> LockHolder {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
            c.execute('BEGIN EXCLUSIVE')
            print('locked', flush=True)
            sys.stdin.readline()
            c.execute('COMMIT')
            """, path]
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        // Wait until the lock is really held.
        _ = await offPool { output.fileHandleForReading.availableData }
        return LockHolder(process: process, input: input)
    }

    struct LockHolder: Sendable {
        let process: ChildProcess
        let input: Pipe

        /// Commits and waits for the process to end: the lock is free when this returns.
        func release() async {
            input.fileHandleForWriting.write(Data("\n".utf8))
            await offPool { process.waitUntilExit() }
        }
    }

    /// Blocking waits go to a Dispatch thread: on Swift's cooperative pool (two threads on a
    /// two-core machine) a Python process starting slowly would stall every other test.
    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in DispatchQueue.global().async { done.resume(returning: work()) } }
    }
}
