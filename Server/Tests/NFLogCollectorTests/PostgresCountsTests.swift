import CollectorTestSupport
import Foundation
import Logging
@testable import NFLogCollector
import PostgresNIO
import Synchronization
import Testing

/// A count and a flag shared with child tasks.
private final class Shared: Sendable {
    private let flag = Atomic(false)
    private let counter = Atomic(0)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
    var count: Int { counter.load(ordering: .relaxed) }
    func increment() { counter.add(1, ordering: .relaxed) }
}

@Suite("PostgreSQL's counts: no row that every batch updates", .enabled(if: TestDatabase.serverURL != nil, PostgresTests.skipMessage))
struct PostgresCountsTests {
    @Test("While another transaction holds the app's totals, name, context and prune rows (and the fold), a batch of that app commits without waiting on a lock")
    func batchesWaitOnNoCountRow() async throws {
        try await TestDatabase.with { url in
            // No background fold or compaction: either may wait on the fold lock held below, which
            // is not a batch waiting (a CI run caught the daily compaction doing so).
            let store = try await PostgresEventStore(url: url, poolSize: 2, passwordFile: nil, readTimeLimit: .seconds(30),
                                                     readingOnly: false, logger: Logger(label: "test"), folds: false)
            _ = try await store.store(try PostgresFixtures.decode(PostgresFixtures.mixed()), app: "shop", receivedAt: 1_750_000_000_000)
            // Folded, so the base rows exist.
            while try await !store.foldCounts() {}
            let logger = Logger(label: "test")
            let stored = Shared()
            var waitedOnLock: [String] = []
            var upload: Task<StoreResult, any Error>?
            try await TestDatabase.withClient(url) { client in
                try await client.withTransaction(logger: logger) { holder in
                    // What another collector's batch held from its upserts of the app's counts to
                    // its commit, before the counts were deltas; and the fold, so that no fold
                    // waits on these rows meanwhile either.
                    try await holder.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.foldLock))", logger: logger)
                    for table in ["totals", "name_counts", "device_prunes"] {
                        try await holder.query(PostgresQuery(unsafeSQL: "SELECT * FROM \(table) WHERE app = 'shop' FOR UPDATE"), logger: logger)
                    }
                    try await holder.query("SELECT * FROM context_counts FOR UPDATE", logger: logger)
                    let task = Task {
                        let result = try await store.store(try PostgresFixtures.decode(PostgresFixtures.mixed()), app: "shop",
                                                           receivedAt: 1_750_000_000_001)
                        stored.set()
                        return result
                    }
                    upload = task
                    // Until the batch is in, or a session of this database waits on a lock: one
                    // held by this transaction, which would last as long as it does.
                    while !stored.isSet && waitedOnLock.isEmpty {
                        for try await query in try await holder.query("""
                            SELECT query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                            """, logger: logger).decode(String.self) {
                            waitedOnLock.append(query)
                        }
                        if waitedOnLock.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
                    }
                }
            }
            #expect(waitedOnLock.isEmpty, "a batch waited on a lock: \(waitedOnLock)")
            let result = try await #require(upload).value
            #expect(result == StoreResult(accepted: 7, duplicates: 0))
            let stats = try await store.stats(app: "shop")
            #expect(stats.eventsStored == 10 && stats.batches == 2 && stats.requests == 2 && stats.aggregatesStored == 4)
            #expect(stats.eventsByName["ui.tap"] == 2 && stats.prunedOnDevicesByName == ["ui.tap": 6, "net.request": 4])
            await store.close()
        }
    }

    @Test("Two collectors storing the same batches while both fold over and over: every count exact, before and after the last fold")
    func foldsBesideBatches() async throws {
        try await TestDatabase.with { url in
            async let a = PostgresEventStore(url: url, poolSize: 4)
            async let b = PostgresEventStore(url: url, poolSize: 4)
            let stores = try await [a, b]
            let batches = try (0..<8).map { index in
                try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(100, name: "n\(index % 3)")))
            }
            let uploadsDone = Shared()
            let folds = Shared()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores {
                    group.addTask {
                        while !uploadsDone.isSet {
                            if try await store.foldCounts() { folds.increment() }
                        }
                    }
                }
                try await withThrowingTaskGroup(of: Void.self) { uploads in
                    for batch in batches {
                        for store in stores {
                            for _ in 0..<3 { uploads.addTask { _ = try await store.store(batch, app: "shop", receivedAt: 1_750_000_000_000) } }
                        }
                    }
                    try await uploads.waitForAll()
                }
                uploadsDone.set()
                try await group.waitForAll()
            }
            #expect(folds.count > 0)
            func check(_ when: String) async throws {
                let stats = try await stores[1].stats(app: "shop")
                #expect(stats.eventsStored == 800 && stats.duplicatesDropped == 4_000, "\(when)")
                #expect(stats.batches == 8 && stats.requests == 48, "\(when)")
                #expect(stats.eventsByName == ["n0": 300, "n1": 300, "n2": 200], "\(when)")
                #expect(try await stores[0].report(app: "shop").eventsStored == 800, "\(when)")
            }
            try await check("before the last fold")
            while try await !stores[0].foldCounts() {}  // false while a store's periodic fold holds the lock
            try await check("after the last fold")
            try await TestDatabase.withClient(url) { client in
                for table in ["totals_deltas", "name_count_deltas", "device_prune_deltas", "context_count_deltas"] {
                    for try await left in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)")).decode(Int64.self) {
                        #expect(left == 0, "\(table) after the last fold")
                    }
                }
            }
            for store in stores { await store.close() }
        }
    }
}
