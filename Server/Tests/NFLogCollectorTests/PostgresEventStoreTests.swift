import CollectorTestSupport
import Foundation
import Logging
@testable import NFLogCollector
import PostgresNIO
import Synchronization
import Testing
@_spi(NFLogShared) import NFLogSupport

/// Why the PostgreSQL suites are skipped without a server.
enum PostgresTests {
    static let skipMessage: Comment = "NFLOG_POSTGRES_URL is not set: the PostgreSQL store's tests need a server (scripts/postgres start DIR prints a URL)"
}

/// The batches the stores are compared on: points, network spans, use cases (completed, not),
/// aggregates, a session end, device diagnostics.
enum PostgresFixtures {
    static func decode(_ json: String) throws -> Batch {
        try BatchDecoder().decode(Array(json.utf8))
    }

    static func points(_ count: Int, name: String = "ui.tap") -> [String] {
        (0..<count).map { _ in BatchFixtures.point(name: name) }
    }

    /// A batch with every kind of record, and diagnostics.
    static func mixed(id: String = UUID().uuidString.lowercased()) -> String {
        let useCase = #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(BatchFixtures.session)","name":"checkout","kind":"span","type":"usecase","timestamp":1750000000000,"start":1750000000000,"end":1750000001000,"duration_ms":1000,"end_parameters":{"completed":false}}"#
        let web = #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(BatchFixtures.session)","name":"page.view","kind":"point","type":"event","timestamp":1750000000000,"source":"web","origin":"https://shop.example"}"#
        let events = [BatchFixtures.point(), BatchFixtures.point(name: "ui.swipe", parameters: nil), BatchFixtures.span(), useCase, web]
        let aggregates = [AggregateFixtures.json(AggregateFixtures.aggregate()),
                          AggregateFixtures.json(AggregateFixtures.aggregate(dimensions: nil))]
        return String(AggregateFixtures.batch(id: id, events: events, aggregates: aggregates).dropLast())
            + #","diagnostics":{"pruned":{"ui.tap":3,"net.request":2},"database_resets":[{"at":1749999999000,"reason":"corrupt"}],"quarantined":4}}"#
    }

    static func lines(_ export: (@escaping @Sendable ([UInt8]) -> Void) async throws -> Void) async throws -> [String] {
        let collected = LineCollector()
        try await export { collected.append(String(decoding: $0, as: UTF8.self)) }
        return collected.lines
    }
}

/// When something happened, marked from another task.
private final class Moment: Sendable {
    private let value = Mutex<ContinuousClock.Instant?>(nil)
    func mark() { value.withLock { $0 = .now } }
    var instant: ContinuousClock.Instant? { value.withLock { $0 } }
}

/// Lines handed to an export's callback (a @Sendable closure).
final class LineCollector: @unchecked Sendable {
    // @unchecked: `stored` is touched only under `lock`.
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}

@Suite("PostgresEventStore against a real PostgreSQL", .enabled(if: TestDatabase.serverURL != nil, PostgresTests.skipMessage))
struct PostgresEventStoreTests {
    @Test("Two collectors (two stores, two pools) storing the same batches at once: each event once, duplicates counted once")
    func concurrentCollectors() async throws {
        try await TestDatabase.with { url in
            // Both migrate the empty database at once: the advisory lock lets one do it.
            async let a = PostgresEventStore(url: url, poolSize: 4)
            async let b = PostgresEventStore(url: url, poolSize: 4)
            let stores = try await [a, b]
            let batches = try (0..<8).map { _ in try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(250))) }
            // Every batch sent 3 times to each collector, all at once: 6 requests per batch.
            let results = try await withThrowingTaskGroup(of: StoreResult.self) { group in
                for batch in batches {
                    for store in stores {
                        for _ in 0..<3 {
                            group.addTask { try await store.store(batch, app: "shop", receivedAt: 1_750_000_000_000) }
                        }
                    }
                }
                return try await group.reduce(into: [StoreResult]()) { $0.append($1) }
            }
            #expect(results.reduce(0) { $0 + $1.accepted } == 8 * 250)
            #expect(results.reduce(0) { $0 + $1.duplicates } == 8 * 250 * 5)
            let stats = try await stores[0].stats(app: "shop")
            #expect(stats.eventsStored == 2_000 && stats.duplicatesDropped == 10_000)
            #expect(stats.batches == 8 && stats.requests == 48 && stats.eventsByName == ["ui.tap": 2_000])
            let lines = try await PostgresFixtures.lines { try await stores[1].exportEvents(app: "shop", line: $0) }
            #expect(lines.count == 2_000)
            for store in stores { await store.close() }
        }
    }

    @Test("Stats and exports are SQLite's, line for line, for the same batches")
    func sameAsSQLite() async throws {
        try await TestDatabase.with { url in
            let postgres = try await PostgresEventStore(url: url, poolSize: 2)
            let path = StoreFixtures.temporaryPath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let sqlite = try SQLiteEventStore(path: path, durableCommits: false)
            let mixed = try PostgresFixtures.decode(PostgresFixtures.mixed())
            let batches = [mixed, mixed, try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(40, name: "ui.scroll"))),
                           try PostgresFixtures.decode(PostgresFixtures.mixed())]
            for (offset, batch) in batches.enumerated() {
                for app in ["shop", "blog"] where app == "shop" || offset == 2 {
                    let receivedAt = 1_750_000_000_000 + Int64(offset)
                    let expected = try await sqlite.store(batch, app: app, receivedAt: receivedAt)
                    #expect(try await postgres.store(batch, app: app, receivedAt: receivedAt) == expected)
                }
            }
            // Once with the counts as they were stored (changes not folded yet, unless the
            // store's own fold came first), once folded: the same either way.
            for app in ["shop", "blog", "none"] {
                #expect(try await postgres.stats(app: app) == (try await sqlite.stats(app: app)))
            }
            while try await !postgres.foldCounts() {}
            for app in ["shop", "blog", "none"] {
                #expect(try await postgres.stats(app: app) == (try await sqlite.stats(app: app)))
                let pgLines = try await PostgresFixtures.lines { try await postgres.exportEvents(app: app, line: $0) }
                let sqliteLines = try await PostgresFixtures.lines { try await sqlite.exportEvents(app: app, line: $0) }
                #expect(pgLines == sqliteLines)
                let pgAggregates = try await PostgresFixtures.lines { try await postgres.exportAggregates(app: app, line: $0) }
                let sqliteAggregates = try await PostgresFixtures.lines { try await sqlite.exportAggregates(app: app, line: $0) }
                #expect(pgAggregates == sqliteAggregates)
            }
            let all = try await PostgresFixtures.lines { try await postgres.exportEvents(app: nil, line: $0) }
            #expect(all == (try await PostgresFixtures.lines { try await sqlite.exportEvents(app: nil, line: $0) }))
            #expect(try await postgres.apps() == (try await sqlite.apps()))

            // Pages: the same lines, page by page, to the end.
            var after: Int64 = 0
            var pages = 0
            var pageLines: [UInt8] = []
            while true {
                let page = try await postgres.exportPage(app: "shop", after: after, limit: 7)
                guard let last = page.last else { break }
                #expect(page.count <= 7)
                pageLines += page.lines
                after = last
                pages += 1
            }
            let shopLines = try await PostgresFixtures.lines { try await sqlite.exportEvents(app: "shop", line: $0) }
            #expect(String(decoding: pageLines, as: UTF8.self) == shopLines.joined())
            #expect(pages == (shopLines.count + 6) / 7)
            let aggregatePage = try await postgres.exportAggregatePage(app: "shop", after: 0, limit: 100)
            let sqliteAggregatePage = try await sqlite.exportAggregatePage(app: "shop", after: 0, limit: 100)
            #expect(aggregatePage.lines == sqliteAggregatePage.lines && aggregatePage.count == 4)
            try await postgres.probeWrite()
            await postgres.close()
            await sqlite.close()
        }
    }

    @Test("Migrations: from empty, four collectors at once apply each once; a restart applies none")
    func migrations() async throws {
        try await TestDatabase.with { url in
            let logger = Logger(label: "test")
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var versions: [Int] = []
                        try await TestDatabase.withClient(url) { client in
                            try await client.withConnection { versions = try await PostgresSchema.migrate($0, logger: logger) }
                        }
                        return versions
                    }
                }
                return try await group.reduce(into: [[Int]]()) { $0.append($1) }
            }
            let all = PostgresSchema.migrations.map(\.version)
            #expect(applied.filter { !$0.isEmpty } == [all])
            let store = try await PostgresEventStore(url: url, poolSize: 1)
            await store.close()
            try await TestDatabase.withClient(url) { client in
                try await client.withConnection { connection in
                    #expect(try await PostgresSchema.migrate(connection, logger: logger).isEmpty)
                    var recorded: [Int] = []
                    for try await version in try await connection.query("SELECT version FROM schema_migrations ORDER BY version",
                                                                       logger: logger).decode(Int.self) {
                        recorded.append(version)
                    }
                    #expect(recorded == all)
                }
            }
        }
    }

    @Test("An earlier version migrates forward: version 1 alone, then the store adds the rest, keeping the events")
    func migrationFromEarlierVersion() async throws {
        try await TestDatabase.with { url in
            let logger = Logger(label: "test")
            try await TestDatabase.withClient(url) { client in
                let applied = try await client.withConnection { connection in
                    try await PostgresSchema.migrate(connection, logger: logger, migrations: Array(PostgresSchema.migrations.prefix(1)))
                }
                #expect(applied == [1])
            }
            let store = try await PostgresEventStore(url: url, poolSize: 1)
            let batch = try PostgresFixtures.decode(PostgresFixtures.mixed())
            #expect(try await store.store(batch, app: "shop", receivedAt: 1_000).accepted == 7)
            await store.close()
        }
    }

    @Test("dropEvents drops whole days older than the cutoff and says how many events they held")
    func dropEvents() async throws {
        try await TestDatabase.with { url in
            let store = try await PostgresEventStore(url: url, poolSize: 2)
            let day: Int64 = 86_400_000
            let start = DayPartition(containing: 1_750_000_000_000).start
            var batches: [Batch] = []
            for offset in 0..<3 {
                let batch = try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(10 + offset)))
                batches.append(batch)
                _ = try await store.store(batch, app: "shop", receivedAt: start + Int64(offset) * day + 5_000)
            }
            // A cutoff inside the third day keeps it whole; the first two go.
            #expect(try await store.dropEvents(receivedBefore: start + 2 * day + 1_000) == 21)
            #expect(try await store.dropEvents(receivedBefore: start + 2 * day + 1_000) == 0)
            // Counted in the app's totals, as on SQLite: stored stays what was ever stored.
            let stats = try await store.stats(app: "shop")
            #expect(stats.eventsExpired == 21 && stats.eventsStored == 33 && stats.eventsKept == 12)
            #expect(try await store.storedIDs(app: "shop", among: batches[0].events.map(\.id)).isEmpty)
            #expect(try await store.storedIDs(app: "shop", among: batches[2].events.map(\.id)).count == 12)
            let lines = try await PostgresFixtures.lines { try await store.exportEvents(app: "shop", line: $0) }
            #expect(lines.count == 12)
            // The dropped day is created again when a batch needs it (here: a late retry).
            #expect(try await store.store(batches[0], app: "shop", receivedAt: start + 5_000).accepted == 10)
            await store.close()
        }
    }

    @Test("A batch still committing into a day that retention drops is waited for: its events counted as expired, their ids removed")
    func dropWaitsForInserts() async throws {
        try await TestDatabase.with { url in
            let store = try await PostgresEventStore(url: url, poolSize: 2)
            let day = DayPartition(containing: 1_750_000_000_000)
            let stored = try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(2)))
            _ = try await store.store(stored, app: "shop", receivedAt: day.start + 1_000)
            // Three more events inserted into that day by a transaction that commits only after
            // the drop has begun (as a batch's would, stored with an old receive time).
            let late = (0..<3).map { _ in UUID() }
            let logger = Logger(label: "test")
            var drop: Task<Int, any Error>?
            try await TestDatabase.withClient(url) { client in
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.query("INSERT INTO event_ids (app, uuid) SELECT 'shop', u FROM unnest(\(late)::uuid[]) AS u",
                                               logger: logger)
                    try await connection.query("""
                        INSERT INTO events (app, uuid, batch_id, session, context_id, name, kind, type, timestamp_ms, received_ms)
                        SELECT 'shop', u, u, u, 1, 'ui.tap', 'point', 'event', 1, \(day.start + 2_000) FROM unnest(\(late)::uuid[]) AS u
                        """, logger: logger)
                    drop = Task { try await store.dropEvents(receivedBefore: day.end) }
                    try await Task.sleep(for: .milliseconds(500))  // the drop now waits for this commit
                }
            }
            #expect(try await #require(drop).value == 5)
            #expect(try await store.stats(app: "shop").eventsExpired == 5)
            #expect(try await store.storedIDs(app: "shop", among: late + stored.events.map(\.id)).isEmpty)
            await store.close()
        }
    }

    @Test("A day another collector dropped is created again when a batch needs it: the insert's failure is retried, not answered")
    func partitionDroppedElsewhere() async throws {
        try await TestDatabase.with { url in
            let a = try await PostgresEventStore(url: url, poolSize: 1)
            let b = try await PostgresEventStore(url: url, poolSize: 1)
            let day = DayPartition(containing: 1_750_000_000_000)
            let first = try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(2)))
            #expect(try await a.store(first, app: "shop", receivedAt: day.start + 1_000).accepted == 2)
            #expect(try await b.dropEvents(receivedBefore: day.end) == 2)
            // Collector a still takes the day for created; its insert finds no partition, and is retried.
            let second = try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(3)))
            #expect(try await a.store(second, app: "shop", receivedAt: day.start + 2_000) == StoreResult(accepted: 3, duplicates: 0))
            #expect(try await b.storedIDs(app: "shop", among: second.events.map(\.id)).count == 3)
            await a.close()
            await b.close()
        }
    }

    @Test("A new day's partition is made beside a read of the events in progress: the upload that needs it does not wait for the read")
    func newDayBesideRead() async throws {
        try await TestDatabase.with { url in
            let store = try await PostgresEventStore(url: url, poolSize: 2)
            let day = DayPartition(containing: 1_750_000_000_000)
            _ = try await store.store(try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(1))),
                                      app: "shop", receivedAt: day.start)
            let logger = Logger(label: "test")
            let storedAt = Moment()
            var upload: Task<StoreResult, any Error>?
            try await TestDatabase.withClient(url) { client in
                try await client.withTransaction(logger: logger) { reader in
                    // A report's read of `events`, its lock held to the end of the transaction.
                    try await reader.query("SELECT count(*) FROM events", logger: logger)
                    upload = Task {
                        let batch = try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(2)))
                        let result = try await store.store(batch, app: "shop", receivedAt: day.end + 1_000)  // the next day
                        storedAt.mark()
                        return result
                    }
                    let deadline = ContinuousClock.now + hangLimit
                    while storedAt.instant == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                }
            }
            let readEnded = ContinuousClock.now
            #expect(try await #require(upload).value == StoreResult(accepted: 2, duplicates: 0))
            let stored = try #require(storedAt.instant)
            #expect(stored < readEnded, "the upload waited for the read to end")
            await store.close()
        }
    }

    @Test("The URL: no password in it, sslmode read, the password from a file")
    func urls() throws {
        #expect(throws: PostgresStoreError.self) { try PostgresURL("postgres://u:secret@h/db") }
        #expect(throws: PostgresStoreError.self) { try PostgresURL("postgres://u@h/db?sslmode=maybe") }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pw-\(UUID().uuidString)").path
        try "s3cret\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let url = try PostgresURL("postgres://nflog@db.example:6432/events?sslmode=verify-full", passwordFile: file, environment: [:])
        #expect(url.host == "db.example" && url.port == 6432 && url.user == "nflog" && url.database == "events")
        #expect(url.password == "s3cret" && url.sslMode == "verify-full")
        #expect(try PostgresURL("postgres://h", environment: ["PGPASSWORD": "p"]).password == "p")
    }

    @Test("The pool runs no keep-alive: one started as close() stops the pool can keep its run() from ever returning")
    func noKeepAlive() throws {
        let options = try PostgresURL("postgres://u@h/db", environment: [:]).configuration(poolSize: 4).options
        #expect(options.keepAliveBehavior == nil)
        #expect(options.maximumConnections == 4)
    }
}

@Suite("PostgreSQL's statement timeout")
struct StatementTimeoutTests {
    @Test("The read time limit in milliseconds: at least 1 (0 would turn it off), none past what PostgreSQL takes")
    func milliseconds() {
        #expect(PostgresEventStore.statementTimeout(.seconds(30)) == 30_000)
        #expect(PostgresEventStore.statementTimeout(.milliseconds(1_500)) == 1_500)
        #expect(PostgresEventStore.statementTimeout(.milliseconds(1)) == 1)
        #expect(PostgresEventStore.statementTimeout(.microseconds(10)) == 1)
        #expect(PostgresEventStore.statementTimeout(.zero) == 1)
        #expect(PostgresEventStore.statementTimeout(.seconds(2_147_482)) == 2_147_482_000)
        #expect(PostgresEventStore.statementTimeout(.seconds(2_147_483)) == 0)
        #expect(PostgresEventStore.statementTimeout(.seconds(Int64.max)) == 0)
    }
}

@Suite("Day partitions")
struct DayPartitionTests {
    @Test("Names are UTC dates and read back; bounds are whole days")
    func names() {
        let partition = DayPartition(containing: 1_750_000_000_000)  // 2025-06-15T15:06:40Z
        #expect(partition.tableName == "events_p20250615")
        #expect(DayPartition(tableName: "events_p20250615") == partition)
        #expect(partition.start == 1_749_945_600_000 && partition.end == partition.start + 86_400_000)
        #expect(DayPartition(containing: 0).tableName == "events_p19700101")
        #expect(DayPartition(tableName: "events_p20250230") == nil)
        #expect(DayPartition(tableName: "events_default") == nil)
        for day in stride(from: Int64(0), to: 40_000, by: 37) {
            #expect(DayPartition(tableName: DayPartition(day: day).tableName)?.day == day)
        }
    }
}
