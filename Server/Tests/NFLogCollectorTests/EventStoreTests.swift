import CollectorTestSupport
import Foundation
@testable import NFLogCollector
import Testing
@_spi(NFLogShared) import NFLogSupport

/// What every ``EventStore`` does the same, run on each store (SQLite, and PostgreSQL when
/// NFLOG_POSTGRES_URL is set): ingest, de-duplication, diagnostics counted once, per-app isolation.
@Suite("The event store, on each store")
struct EventStoreTests {
    @Test("A batch is stored; a retry of it is counted as duplicates, its diagnostics once", arguments: StoreKind.all)
    func storeAndRetry(_ kind: StoreKind) async throws {
        let made = try await kind.makeStore()
        let store = made.store
        let batch = try PostgresFixtures.decode(PostgresFixtures.mixed())
        let first = try await store.store(batch, app: "shop", receivedAt: 1_750_000_001_000)
        #expect(first == StoreResult(accepted: 7, duplicates: 0))
        let retry = try await store.store(batch, app: "shop", receivedAt: 1_750_000_002_000)
        #expect(retry == StoreResult(accepted: 0, duplicates: 7))
        let stats = try await store.stats(app: "shop")
        #expect(stats.eventsStored == 5 && stats.duplicatesDropped == 5)
        #expect(stats.aggregatesStored == 2 && stats.aggregateDuplicatesDropped == 2 && stats.aggregatedEvents == 6)
        #expect(stats.batches == 1 && stats.requests == 2)
        #expect(stats.prunedOnDevices == 5 && stats.prunedOnDevicesByName == ["ui.tap": 3, "net.request": 2])
        #expect(stats.databaseResets == 1 && stats.quarantinedOnDevices == 4)
        #expect(stats.eventsByName == ["ui.tap": 1, "ui.swipe": 1, "net.request": 1, "checkout": 1, "page.view": 1])
        let ids = batch.events.map(\.id) + [UUID()]
        #expect(try await store.storedIDs(app: "shop", among: ids) == Set(batch.events.map(\.id)))
        await store.close()
        // Closed, it refuses (each store with its own error) rather than hang or trap.
        await #expect(throws: (any Error).self) { try await store.stats(app: "shop") }
        await made.remove()
    }

    @Test("A uuid twice in one batch is stored once, the second counted a duplicate", arguments: StoreKind.all)
    func duplicateInsideBatch(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let uuid = UUID().uuidString.lowercased()
            let batch = try PostgresFixtures.decode(BatchFixtures.batch(events: [BatchFixtures.point(uuid), BatchFixtures.point(uuid)]))
            #expect(try await store.store(batch, app: "shop", receivedAt: 1_000) == StoreResult(accepted: 1, duplicates: 1))
            #expect(try await store.stats(app: "shop").eventsStored == 1)
        }
    }

    @Test("A batch of 85 events (a 64-row and a 16-row statement, then single rows), then one with 40 of them, 45 new and a new uuid twice: each event is counted once, new or duplicate",
          arguments: StoreKind.all)
    func manyRowsWithDuplicates(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = (0..<85).map { _ in UUID().uuidString.lowercased() }
            let new = (0..<45).map { _ in UUID().uuidString.lowercased() }
            // The repeated uuid falls inside the second batch's 64-row statement, after its first use.
            let second = Array(first[20..<60]) + new[..<10] + [new[3]] + new[10...]
            let stored = try await store.store(PostgresFixtures.decode(BatchFixtures.batch(events: first.map { BatchFixtures.point($0) })),
                                               app: "shop", receivedAt: 1_000)
            #expect(stored == StoreResult(accepted: 85, duplicates: 0))
            let again = try await store.store(PostgresFixtures.decode(BatchFixtures.batch(events: second.map { BatchFixtures.point($0, name: "ui.swipe") })),
                                              app: "shop", receivedAt: 2_000)
            #expect(again == StoreResult(accepted: 45, duplicates: 41))
            let stats = try await store.stats(app: "shop")
            #expect(stats.eventsStored == 130 && stats.duplicatesDropped == 41)
            #expect(stats.eventsByName == ["ui.tap": 85, "ui.swipe": 45])
            let ids = (first + new).compactMap { UUID(uuidString: $0) }
            #expect(try await store.storedIDs(app: "shop", among: ids + [UUID()]) == Set(ids))
        }
    }

    @Test("Apps are isolated: the same uuids in two apps are two events, counted apart", arguments: StoreKind.all)
    func perAppIsolation(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let batch = try PostgresFixtures.decode(BatchFixtures.batch(events: PostgresFixtures.points(3)))
            let ids = batch.events.map(\.id)
            #expect(try await store.store(batch, app: "a", receivedAt: 1_000) == StoreResult(accepted: 3, duplicates: 0))
            #expect(try await store.store(batch, app: "b", receivedAt: 1_000) == StoreResult(accepted: 3, duplicates: 0))
            #expect(try await store.store(batch, app: "b", receivedAt: 1_000) == StoreResult(accepted: 0, duplicates: 3))
            let a = try await store.stats(app: "a")
            #expect(a.eventsStored == 3 && a.duplicatesDropped == 0 && a.requests == 1)
            #expect(try await store.stats(app: "b").duplicatesDropped == 3)
            #expect(try await store.stats(app: "c").eventsStored == 0)
            #expect(try await store.apps() == ["a", "b"])
            #expect(try await store.storedIDs(app: "a", among: ids) == Set(ids))
            #expect(try await store.storedIDs(app: "c", among: ids).isEmpty)
            #expect(try await store.exportPage(app: "a", after: 0, limit: 100).count == 3)
            #expect(try await store.exportPage(app: "c", after: 0, limit: 100).count == 0)
        }
    }
}
