import Foundation
import Testing
@testable import NFLogger
@_spi(NFLogShared) import NFLogSupport
import NFLogTestSupport

@Suite("SQLite point and span tables")
struct StorageTests {
    @Test("A point event's row holds its uuid, name, type, parameters, timestamp and session")
    func pointRow() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let before = Int64(Date().timeIntervalSince1970 * 1_000)
        let status = await logger.logEvent(name: "ui.tap", type: "interaction",
                                           parameters: ["button": "buy", "count": 3, "price": 9.5, "ok": true, "note": LogValue.null,
                                                        "tags": ["a", 1] as LogValue, "user": ["id": 7]])
        let after = Int64(Date().timeIntervalSince1970 * 1_000)
        let id = try #require(status.recordedID)
        await logger.close()

        let reader = try DatabaseReader(directory.databaseURL)
        let row = try #require(try reader.rows("SELECT * FROM point_events").first)
        #expect(row["uuid"] as? [UInt8] == id.bytes)
        #expect(row["name"] as? String == "ui.tap")
        #expect(row["type"] as? String == "interaction")
        let timestamp = try #require(row["timestamp_ms"] as? Int64)
        #expect((before...after).contains(timestamp))
        let parameters = try jsonObject(row["parameters"])
        #expect(parameters["button"] as? String == "buy")
        #expect(parameters["count"] as? Int == 3)
        #expect(parameters["price"] as? Double == 9.5)
        #expect(parameters["ok"] as? Bool == true)
        #expect(parameters["note"] is NSNull)
        #expect((parameters["tags"] as? [Any])?.count == 2)
        #expect((parameters["user"] as? [String: Any])?["id"] as? Int == 7)

        // The row points at its session, and the session at the standard properties.
        let session = try #require(try reader.rows("""
            SELECT s.uuid, c.properties FROM sessions s JOIN contexts c ON c.id = s.context_id
            WHERE s.id = \(row["session_id"] as? Int64 ?? -1)
            """).first)
        #expect(session["uuid"] as? [UInt8] == logger.sessionID.bytes)
        let properties = try jsonObject(session["properties"])
        #expect(properties["sdk_name"] as? String == "NFLogger")
        #expect(properties["sdk_version"] as? String == NFLogger.sdkVersion)
        #expect(properties["app_id"] as? String == "com.example.tests")
        #expect(properties["app_version"] as? String == "1.0.0")
        #expect(properties["os_name"] as? String != nil && properties["os_version"] as? String != nil)
        #expect(properties["locale"] as? String != nil)
    }

    @Test("Ids are UUIDv7: version 7, RFC variant, timestamp in the first 48 bits, all distinct, even past 4,096 in one millisecond")
    func uuidV7() async throws {
        var generator = EventIDGenerator()
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let id = generator.make(milliseconds: 1_750_000_000_123)
            let bytes = id.bytes
            #expect(bytes[6] >> 4 == 7)
            #expect(bytes[8] >> 6 == 0b10)
            let ms = bytes[0..<6].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            #expect(ms == 1_750_000_000_123)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }

    @Test("Ids of one generator share their middle bits and count up in their last 4 bytes, so every span id (the last 8) differs; new bits after the draw's ids are used")
    func uuidV7Counter() {
        func parts(_ id: UUID) -> (shared: [UInt8], counter: UInt32, spanID: UInt64) {
            let bytes = id.bytes
            return (Array(bytes[6..<12]), bytes[12...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, TransactionContext.spanID(of: id))
        }
        var generator = EventIDGenerator(idsPerDraw: 1_000)
        let first = parts(generator.make(milliseconds: 1_000))
        var spanIDs: Set<UInt64> = [first.spanID]
        var previous = first
        for index in 1..<1_000 {
            let next = parts(generator.make(milliseconds: 1_000 - Int64(index % 3)))  // the clock may go back
            #expect(next.shared == first.shared && next.counter == previous.counter &+ 1)
            #expect(spanIDs.insert(next.spanID).inserted)
            previous = next
        }
        let redrawn = parts(generator.make(milliseconds: 1_000))
        #expect(redrawn.shared != first.shared, "after idsPerDraw ids, new bits")
        #expect(spanIDs.insert(redrawn.spanID).inserted)
    }

    @Test("A span row is written at start and completed at end, with a monotonic duration")
    func spanRow() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        let logger = try NFLogger(configuration: directory.configuration(), clock: clock)
        let (span, started) = await logger.startEvent(name: "net.request", type: "network", parameters: ["path": "/login"])
        #expect(started.isRecorded)

        let reader = try DatabaseReader(directory.databaseURL)
        let open = try #require(try reader.rows("SELECT * FROM span_events").first)
        #expect(open["uuid"] as? [UInt8] == span.id.bytes)
        #expect(open["end_ms"] as? Int64 == nil && open["duration_ns"] as? Int64 == nil)
        #expect(open["start_ms"] as? Int64 == clock.wallMilliseconds())

        clock.advance(1.25)
        #expect(await span.end(parameters: ["status": 200]) == .recorded(span.id))
        let ended = try #require(try reader.rows("SELECT * FROM span_events").first)
        #expect(ended["end_ms"] as? Int64 == clock.wallMilliseconds())
        #expect(ended["duration_ns"] as? Int64 == 1_250_000_000)
        #expect(try jsonObject(ended["parameters"])["path"] as? String == "/login")
        #expect(try jsonObject(ended["end_parameters"])["status"] as? Int == 200)
    }

    @Test("Ending a span twice, or ending an unknown span, fails and changes nothing")
    func badEnds() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        let logger = try NFLogger(configuration: directory.configuration(), clock: clock)
        let (span, _) = await logger.startEvent(name: "screen.home")
        clock.advance(2)
        #expect(await span.end(parameters: ["first": true]) == .recorded(span.id))
        clock.advance(5)
        #expect(await span.end(parameters: ["second": true]) == .failed(.spanAlreadyEnded(span.id)))
        let unknown = UUID()
        #expect(await logger.endEvent(id: unknown) == .failed(.unknownSpan(unknown)))
        await logger.close()

        let reader = try DatabaseReader(directory.databaseURL)
        let row = try #require(try reader.rows("SELECT duration_ns, end_parameters FROM span_events").first)
        #expect(row["duration_ns"] as? Int64 == 2_000_000_000)
        #expect(try jsonObject(row["end_parameters"])["first"] as? Bool == true)
        #expect(try reader.int("SELECT count(*) FROM span_events") == 1)
    }

    @Test("A logger released and a new one opened on the same file finds every recorded event")
    func reopen() async throws {
        let directory = TemporaryDirectory()
        var recorded: Set<UUID> = []
        do {
            let first = try NFLogger(configuration: directory.configuration())
            for index in 0..<500 {
                let status = await first.logEvent(name: "batch.item", parameters: ["index": index])
                recorded.insert(try #require(status.recordedID))
            }
        }  // released without close()
        let second = try NFLogger(configuration: directory.configuration())
        let diagnostics = await second.diagnostics()
        #expect(diagnostics.storedPointEvents == 500)
        await second.close()
        let stored = try DatabaseReader(directory.databaseURL).rows("SELECT uuid FROM point_events")
        let storedIDs = Set(stored.compactMap { ($0["uuid"] as? [UInt8]).map { bytes in
            UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        } })
        #expect(storedIDs == recorded)
    }

    @Test("A span open across a restart is ended by id by the next logger")
    func spanAcrossRestart() async throws {
        let directory = TemporaryDirectory()
        let spanID: UUID
        do {
            let first = try NFLogger(configuration: directory.configuration())
            let (span, started) = await first.startEvent(name: "form.signup")
            #expect(started.isRecorded)
            spanID = span.id
            await first.close()
        }
        let second = try NFLogger(configuration: directory.configuration())
        #expect(await second.diagnostics().openSpans == 1)
        #expect(await second.endEvent(id: spanID, parameters: ["completed": true]) == .recorded(spanID))
        #expect(await second.endEvent(id: spanID) == .failed(.spanAlreadyEnded(spanID)))
        let diagnostics = await second.diagnostics()
        #expect(diagnostics.openSpans == 0 && diagnostics.storedSpanEvents == 1)
    }

    @Test("A new database gets WAL journaling and the latest schema version")
    func schema() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        #expect(await logger.logEvent(name: "a.b").isRecorded)
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.connection.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try reader.int("PRAGMA user_version") == Int(Schema.latestVersion))
    }

    @Test("A database from a newer SDK is refused with a clear storage error, not overwritten")
    func newerSchema() async throws {
        let directory = TemporaryDirectory()
        do {
            let connection = try SQLiteConnection(path: directory.databaseURL.path, busyTimeoutMilliseconds: 1_000)
            try connection.execute("CREATE TABLE future (x); PRAGMA user_version = 99")
        }
        let logger = try NFLogger(configuration: directory.configuration())
        let status = await logger.logEvent(name: "a.b")
        guard case .failed(.storage(let error)) = status else {
            Issue.record("expected a storage failure, got \(status)")
            return
        }
        #expect(error.message.contains("newer"))
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.int("PRAGMA user_version") == 99)
        #expect(try reader.int("SELECT count(*) FROM sqlite_master WHERE name = 'point_events'") == 0)
    }

    @Test("Migrating from an empty database applies every migration in order")
    func migrationsFromEmpty() throws {
        let directory = TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.databaseURL.path, busyTimeoutMilliseconds: 1_000)
        try Schema.migrate(connection)
        #expect(try connection.scalarInt("PRAGMA user_version") == Int64(Schema.latestVersion))
        try Schema.migrate(connection)  // a second run is a no-op
        let tables = try DatabaseReader(directory.databaseURL)
            .rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0["name"] as? String }
        #expect(tables == ["aggregate_events", "contexts", "deliveries", "device_notes", "encryption", "open_epochs", "output_holds", "outputs",
                           "point_events", "pruned_counts", "pruned_totals", "quarantined_events", "sessions", "span_events", "upload_batches", "upload_hold"])
    }

    @Test("A version-1 database with events is migrated in place; its events upload like new ones")
    func migrationFromVersion1() async throws {
        let directory = TemporaryDirectory()
        do {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let connection = try olderDatabase(at: directory.databaseURL, version: 1, now: now)
            try connection.execute("""
                INSERT INTO point_events (uuid, session_id, name, type, parameters, timestamp_ms) VALUES (randomblob(16), 1, 'old.event', 'event', '{"v":1}', \(now));
                """)
            #expect(try connection.scalarInt("PRAGMA user_version") == 1)
        }
        let logger = try NFLogger(configuration: directory.configuration())
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 1)
        #expect(diagnostics.waitingForUpload == 1)
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.int("PRAGMA user_version") == Int(Schema.latestVersion))
        #expect(try reader.int("SELECT count(*) FROM point_events WHERE batch_id IS NULL AND name = 'old.event'") == 1)
    }

    @Test("A row SQLite refuses fails alone; the rest of its drain is recorded")
    func oneBadRow() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxPendingEvents = 1_000
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.logEvent(name: "warm.up").isRecorded)  // creates the schema
        do {  // A fault injected on purpose: the database refuses one name.
            let connection = try SQLiteConnection(path: directory.databaseURL.path, busyTimeoutMilliseconds: 1_000)
            try connection.execute("""
                CREATE TRIGGER refuse_boom BEFORE INSERT ON point_events WHEN NEW.name = 'boom'
                BEGIN SELECT RAISE(ABORT, 'boom is refused'); END
                """)
        }
        let log = StatusLog()
        // Queued back to back, so they share a drain (and would share a transaction).
        for name in ["good.one", "good.two", "boom", "good.three"] { logger.logEvent(name: name, completion: log.completion) }
        let span = logger.startEvent(name: "good.span", completion: log.completion)
        await log.wait(for: 5)
        let statuses = log.statuses
        #expect(statuses.filter(\.isRecorded).count == 4)
        let failures = statuses.compactMap(\.failure)
        #expect(failures.count == 1)
        if case .storage(let error)? = failures.first {
            #expect(error.primaryCode == 19 && error.message.contains("boom is refused"))
        } else {
            Issue.record("expected a storage failure for boom, got \(failures)")
        }
        #expect(await span.end() == .recorded(span.id))
        let names = try DatabaseReader(directory.databaseURL).rows("SELECT name FROM point_events ORDER BY id").compactMap { $0["name"] as? String }
        #expect(names == ["warm.up", "good.one", "good.two", "good.three"])
    }

    @Test("When the database cannot be opened, calls fail with a storage error; logging resumes by itself")
    func recoversAfterOpenFailure() async throws {
        let directory = TemporaryDirectory()
        // A fault injected on purpose: a directory sits where the database file should be.
        try FileManager.default.createDirectory(at: directory.databaseURL, withIntermediateDirectories: true)
        let logger = try NFLogger(configuration: directory.configuration())
        let status = await logger.logEvent(name: "ui.tap")
        guard case .failed(.storage(let error)) = status else {
            Issue.record("expected a storage failure, got \(status)")
            return
        }
        #expect(await logger.diagnostics().lastStorageError == error)
        try FileManager.default.removeItem(at: directory.databaseURL)
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 1 && diagnostics.lastStorageError == nil)
    }

    @Test("A closed logger does not reopen its database, even for diagnostics")
    func closedStaysClosed() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        await logger.close()
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: directory.databaseURL.path + suffix)
        }
        _ = await logger.diagnostics()
        #expect(await logger.logEvent(name: "ui.tap") == .failed(.closed))
        #expect(!FileManager.default.fileExists(atPath: directory.databaseURL.path))
    }
}
