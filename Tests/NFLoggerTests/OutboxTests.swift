import Dispatch
import Foundation
import NFLogTestSupport
import Testing
@testable import NFLogger
@_spi(NFLogShared) import NFLogSupport

/// The outbox's rules, reached directly on a real SQLite file: how batches are formed from the
/// ready rows, and what delivering, releasing and quarantining a batch does to them.
@Suite("Outbox: batches from the oldest ready rows; delivered, released and quarantined batches")
struct OutboxTests {
    /// A database as the logger opens it (the collector its only output), owned by a queue of the test's.
    final class Fixture: @unchecked Sendable {
        // @unchecked: `ids` and `sessions` are used only inside `owner.queue.sync`, one call at a time.
        let owner = QueueOwner(queue: DispatchQueue(label: "outbox-tests"))
        let database: DatabaseManager
        private var ids = EventIDGenerator()
        private var sessions = SessionTracker(idleTimeoutNanoseconds: 30 * 60 * 1_000_000_000, wallMilliseconds: 1_750_000_000_000)
        private var wall: Int64 = 1_750_000_000_000

        init(_ directory: TemporaryDirectory) {
            database = DatabaseManager(owner: owner, path: directory.databaseURL.path, busyTimeoutMilliseconds: 5_000,
                                       properties: StandardProperties(appID: "com.example.tests", appVersion: "1.0.0"),
                                       limits: StorageLimits(Configuration.Limits()))
        }

        /// Writes point events with these names, a millisecond apart, and returns their statuses.
        func write(_ names: [String]) -> [LogStatus] {
            owner.queue.sync {
                let requests = names.map { name -> StorageRequest in
                    wall += 1
                    let draft = EventDraft(kind: .point, name: name, type: "event", wallMilliseconds: wall, monotonicNanoseconds: 1,
                                           loggedWhilePending: false, link: nil)
                    return .event(EventRecord(id: ids.make(milliseconds: wall), session: sessions.current, draft: draft))
                }
                return database.write(requests)
            }
        }

        func outbox<T>(_ body: (Outbox) throws(SQLiteError) -> T) throws -> T {
            try owner.queue.sync { () throws -> T in try database.withOutbox(Configuration.collectorOutputID, body) }
        }

        func close() { owner.queue.sync { database.close() } }
    }

    func names(_ batch: OutgoingBatch?) -> [String] { batch?.events.map(\.name) ?? [] }

    @Test("A batch takes the oldest ready rows up to its bound; an unfinished batch goes again unchanged; a busy one is skipped")
    func formingBatches() throws {
        let directory = TemporaryDirectory()
        let fixture = Fixture(directory)
        defer { fixture.close() }
        #expect(fixture.write((0..<5).map { "e.\($0)" }).allSatisfy { $0.isRecorded })
        let first = try #require(try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 2, maxBytes: 1 << 20, now: 0) })
        #expect(names(first) == ["e.0", "e.1"])
        // Interrupted (a failure, a crash): the same batch, same id and events, goes again.
        let again = try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 2, maxBytes: 1 << 20, now: 0) }
        #expect(again?.id == first.id && names(again) == ["e.0", "e.1"])
        // In flight: the next batch is formed from the rows after it.
        let second = try fixture.outbox { (o) throws(SQLiteError) in
            try o.nextBatch(maxEvents: 2, maxBytes: 1 << 20, now: 0, excluding: [first.rowID])
        }
        #expect(names(second) == ["e.2", "e.3"] && second?.id != first.id)
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.waitingCount() } == 5)
    }

    @Test("Rows of two contexts interleaved (another process's app version on the same file), one held between them: each batch takes its context's oldest ready rows, and exactly those are marked")
    func interleavedContexts() throws {
        let directory = TemporaryDirectory()
        let fixture = Fixture(directory)
        defer { fixture.close() }
        _ = fixture.write((0..<7).map { "a.\($0)" })
        do {
            // Odd rows move to a second context's session; a.2 waits for consent (held).
            let connection = try SQLiteConnection(path: directory.databaseURL.path, busyTimeoutMilliseconds: 1_000)
            try connection.execute("""
                INSERT INTO contexts (id, properties) SELECT 2, replace(properties, '"1.0.0"', '"2.0.0"') FROM contexts WHERE id = 1;
                INSERT INTO sessions (id, uuid, context_id, started_ms) VALUES (2, randomblob(16), 2, 1750000000000);
                UPDATE point_events SET session_id = 2 WHERE name IN ('a.1', 'a.3', 'a.5');
                UPDATE point_events SET held = 1 WHERE name = 'a.2';
                """)
        }
        let first = try #require(try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 2, maxBytes: 1 << 20, now: 0) })
        #expect(names(first) == ["a.0", "a.4"])
        let second = try #require(try fixture.outbox { (o) throws(SQLiteError) in
            try o.nextBatch(maxEvents: 2, maxBytes: 1 << 20, now: 0, excluding: [first.rowID])
        })
        #expect(names(second) == ["a.1", "a.3"])
        let third = try #require(try fixture.outbox { (o) throws(SQLiteError) in
            try o.nextBatch(maxEvents: 5, maxBytes: 1 << 20, now: 0, excluding: [first.rowID, second.rowID])
        })
        #expect(names(third) == ["a.5"], "the oldest ready row left is a.5 (a.6's context comes after it); a batch holds one context")
        // Each batch's rows are what it sent: delivering them removes exactly those.
        for batch in [first, second, third] {
            #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.delivered(batch) } == batch.events.count)
        }
        let left = try DatabaseReader(directory.databaseURL).rows("SELECT name, held, batch_id FROM point_events ORDER BY id")
        #expect(left.compactMap { $0["name"] as? String } == ["a.2", "a.6"])
        #expect(left.allSatisfy { ($0["batch_id"] ?? nil) == nil }, "no row left is in a batch: \(left)")
    }

    @Test("Delivered: its rows leave; released: its rows are ready again; the flush's watermark is met when all are delivered")
    func deliverAndRelease() throws {
        let directory = TemporaryDirectory()
        let fixture = Fixture(directory)
        defer { fixture.close() }
        _ = fixture.write(["a.1", "a.2", "a.3"])
        let watermark = try fixture.outbox { (o) throws(SQLiteError) in try o.watermark() }
        let first = try #require(try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 2, maxBytes: 1 << 20, now: 0) })
        try fixture.outbox { (o) throws(SQLiteError) in try o.release(first) }
        // Released rows are the oldest ready ones again: a smaller batch starts with them.
        let half = try #require(try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 1, maxBytes: 1 << 20, now: 0) })
        #expect(names(half) == ["a.1"])
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.delivered(half) } == 1)
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.waitingCount() } == 2)
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.hasWaiting(upTo: watermark) })
        let rest = try #require(try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 10, maxBytes: 1 << 20, now: 0) })
        #expect(names(rest) == ["a.2", "a.3"])
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.delivered(rest) } == 2)
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.hasWaiting(upTo: watermark) } == false)
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM point_events") == 0)
    }

    @Test("A single refused event is quarantined with its reason and no longer blocks the rows behind it")
    func quarantine() throws {
        let directory = TemporaryDirectory()
        let fixture = Fixture(directory)
        defer { fixture.close() }
        _ = fixture.write(["bad.one", "good.one"])
        let single = try #require(try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 1, maxBytes: 1 << 20, now: 0) })
        try fixture.outbox { (o) throws(SQLiteError) in try o.quarantine(single, status: 422, reason: "events[0]: refused", now: 1) }
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.quarantinedCount() } == 1)
        #expect(try fixture.outbox { (o) throws(SQLiteError) in try o.waitingCount() } == 1)
        let next = try fixture.outbox { (o) throws(SQLiteError) in try o.nextBatch(maxEvents: 10, maxBytes: 1 << 20, now: 0) }
        #expect(names(next) == ["good.one"])
    }

    @Test("An upload hold (Retry-After) is kept in the database for the next process")
    func holdSurvivesReopening() throws {
        let directory = TemporaryDirectory()
        let fixture = Fixture(directory)
        _ = fixture.write(["x.1"])
        try fixture.outbox { (o) throws(SQLiteError) in try o.holdUploads(untilMilliseconds: 1_750_000_600_000, status: 503, message: "busy") }
        fixture.close()
        let reopened = Fixture(directory)
        defer { reopened.close() }
        let hold = try reopened.outbox { (o) throws(SQLiteError) in try o.uploadHold() }
        #expect(hold?.untilMilliseconds == 1_750_000_600_000 && hold?.status == 503 && hold?.message == "busy")
    }
}
