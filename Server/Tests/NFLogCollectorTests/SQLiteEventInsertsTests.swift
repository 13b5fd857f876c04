import Foundation
@testable import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
import Testing

/// The SQLite store's multi-row event inserts: the row ids they report are the rows their uuids
/// find, and a duplicate (stored before, or earlier in the same call) reports none; also near
/// the largest row id, where SQLite picks ids at random (the two tests of an independent review).
@Suite("SQLite event inserts, many rows to a statement")
struct SQLiteEventInsertsTests {
    /// Point events with these uuids, as a batch decodes them.
    static func events(_ uuids: [String]) throws -> [Batch.Event] {
        try PostgresFixtures.decode(BatchFixtures.batch(events: uuids.map { BatchFixtures.point($0) })).events
    }

    @Test("Each event's reported row id is the row its uuid finds; stored again, none is new; with some stored and a uuid twice, only the first use of each new one is")
    func rowIDs() async throws {
        let path = StoreFixtures.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        await store.close()  // the file keeps its schema
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 10_000)
        let inserts = try SQLiteEventInserts(connection)
        let find = try connection.prepare("SELECT id FROM events WHERE app = 'shop' AND uuid = ?")
        func storedID(_ event: Batch.Event) throws -> Int64? {
            try find.bind(event.id, at: 1)
            return try find.collect { $0.int64(at: 0) }.first
        }
        let shared = SQLiteEventInserts.Shared(app: "shop", batch: UUID(), context: 1, receivedAt: 1_000)
        let firstUUIDs = (0..<(64 + 16 + 3)).map { _ in UUID().uuidString.lowercased() }
        let first = try Self.events(firstUUIDs)
        let ids = try connection.transaction { () throws(SQLiteError) in try inserts.insert(first, shared) }
        #expect(ids.count == first.count && Set(ids.compactMap { $0 }).count == first.count)
        for (event, id) in zip(first, ids) { #expect(try id == storedID(event)) }

        let again = try connection.transaction { () throws(SQLiteError) in try inserts.insert(first, shared) }
        #expect(again == Array(repeating: nil, count: first.count))

        let new = (0..<70).map { _ in UUID().uuidString.lowercased() }
        let mixed = try Self.events(Array(firstUUIDs[..<30]) + new[..<5] + [new[2]] + new[5...])
        let mixedIDs = try connection.transaction { () throws(SQLiteError) in try inserts.insert(mixed, shared) }
        #expect(mixedIDs[..<30].allSatisfy { $0 == nil })
        #expect(mixedIDs[35] == nil)  // new[2] again
        let newIndexes = Array(30..<35) + Array(36..<mixed.count)
        for index in newIndexes { #expect(try mixedIDs[index] != nil && mixedIDs[index] == storedID(mixed[index])) }
        #expect(try connection.scalarInt("SELECT count(*) FROM events") == Int64(first.count + new.count))
    }

    /// A new store's file (closed) whose `events` holds one row, another app's, with row id `id`;
    /// and a connection to it.
    static func store(withRowID id: Int64) async throws -> (path: String, connection: SQLiteConnection) {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        await store.close()
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 10_000)
        try connection.execute("""
            INSERT INTO events (id, app, uuid, batch_id, session, context_id, name, kind, type, timestamp_ms, received_ms)
            VALUES (\(id), 'other', x'00000000000000000000000000000001', x'00', x'00', 1, 'n', 'point', 'event', 0, 0)
            """)
        return (path, connection)
    }

    @Test("Near Int64.max (SQLite picks random row ids), every inserted event is still reported with the id it was stored as")
    func nearLargestRowID() async throws {
        // A row 10 below the largest id SQLite can give in order.
        let (path, connection) = try await Self.store(withRowID: Int64.max - 10)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inserts = try SQLiteEventInserts(connection)
        let find = try connection.prepare("SELECT id FROM events WHERE app = 'shop' AND uuid = ?")
        // 16 events, one statement's worth: in one statement the last 6 would get random (smaller) row ids.
        let events = try Self.events((0..<16).map { _ in UUID().uuidString.lowercased() })
        let shared = SQLiteEventInserts.Shared(app: "shop", batch: UUID(), context: 1, receivedAt: 1_000)
        let ids = try connection.transaction { () throws(SQLiteError) in try inserts.insert(events, shared) }
        #expect(try connection.scalarInt("SELECT count(*) FROM events WHERE app = 'shop'") == 16)
        #expect(ids.compactMap { $0 }.count == 16, "events stored but reported as duplicates: \(ids.filter { $0 == nil }.count)")
        for (event, id) in zip(events, ids) {
            try find.bind(event.id, at: 1)
            #expect(try id == find.collect { $0.int64(at: 0) }.first)
        }
    }

    @Test("Near Int64.max, a batch of new events is counted as accepted (the old one-row code did), not as duplicates")
    func storeCountsNearLargestRowID() async throws {
        let path = try await Self.store(withRowID: Int64.max).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        let uuids = (0..<20).map { _ in UUID().uuidString.lowercased() }
        let result = try await store.store(PostgresFixtures.decode(BatchFixtures.batch(events: uuids.map { BatchFixtures.point($0) })),
                                           app: "shop", receivedAt: 1_000)
        let stats = try await store.stats(app: "shop")
        await store.close()
        #expect(result == StoreResult(accepted: 20, duplicates: 0))
        #expect(stats.eventsStored == 20 && stats.duplicatesDropped == 0)
    }

    @Test("The statement for many rows numbers each row's parameters after the last row's")
    func parameters() {
        let sql = SQLiteEventInserts.insertSQL(rows: 2)
        #expect(sql.contains("(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?21, ?16, ?17, ?18, ?19, ?20)"))
        #expect(sql.contains("(?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?42, ?37, ?38, ?39, ?40, ?41)"))
    }
}
