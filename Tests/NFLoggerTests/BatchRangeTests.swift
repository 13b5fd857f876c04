import Foundation
import NFLoggerTesting
@_spi(NFLogShared) import NFLogSupport
import Testing
@testable import NFLogger
import NFLogTestSupport

/// A batch of the collector's finds its rows by the id range it recorded (`BatchRange`), with no
/// index on `batch_id`: every statement on a batch's rows must read that range only, and a batch
/// formed before the ranges existed must still go, whole, and be settled.
@Suite("Batches find their rows by recorded id ranges")
struct BatchRangeTests {
    /// `EXPLAIN QUERY PLAN`'s lines for `sql`.
    static func plan(_ connection: SQLiteConnection, _ sql: String) throws -> [String] {
        try connection.prepare("EXPLAIN QUERY PLAN " + sql).collect { $0.text(at: 3) ?? "" }
    }

    @Test("Reading, releasing, settling and counting a batch's rows search each table by row id: no table scan, no temporary index",
          arguments: RecordKind.allCases)
    func statementsReadTheRangeOnly(kind: RecordKind) throws {
        let directory = TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.databaseURL.path, busyTimeoutMilliseconds: 1_000)
        try Schema.migrate(connection)
        let table = "\(kind.rawValue)_events"
        let rows = BatchRange.rows(of: kind, inBatch: "?1")
        let statements = [
            "SELECT e.id FROM \(table) e WHERE \(BatchRange.rows(of: kind, inBatch: "?1", alias: "e.")) ORDER BY e.id",
            "UPDATE \(table) SET batch_id = NULL WHERE \(rows)",
            "UPDATE \(table) SET batch_id = 0 WHERE \(rows)",
            "DELETE FROM \(table) WHERE \(rows)",
            "SELECT count(*) FROM \(table) WHERE \(rows)",
            "SELECT count(*) FROM upload_batches b CROSS JOIN \(table) e WHERE b.output = 0 AND \(BatchRange.rows(of: kind, inBatch: "b.id", alias: "e."))",
        ]
        for sql in statements {
            let lines = try Self.plan(connection, sql)
            let onTable = lines.filter { $0.contains(" \(table)") || $0.contains(" e ") || $0.hasSuffix(" e") }
            #expect(!onTable.isEmpty, "\(sql): \(lines)")
            for line in onTable {
                #expect(line.contains("INTEGER PRIMARY KEY (rowid>? AND rowid<?)"), "\(sql): \(lines)")
            }
            #expect(!lines.contains { $0.contains("AUTOMATIC") }, "\(sql): \(lines)")
        }
    }

    @Test("A batch formed before version 12 (no range recorded) goes again with its id and its events, is settled, and its rows leave; the event outside it follows")
    func batchFromBeforeTheRanges() async throws {
        let directory = TemporaryDirectory()
        let batchID = UUID()
        do {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let connection = try olderDatabase(at: directory.databaseURL, version: 11, now: now)
            try connection.execute("""
                INSERT INTO upload_batches (id, uuid, context_id, created_ms, attempts) VALUES (7, x'\(batchID.uuidString.replacingOccurrences(of: "-", with: ""))', 1, \(now), 1);
                INSERT INTO point_events (uuid, session_id, name, type, parameters, timestamp_ms, batch_id) VALUES
                    (randomblob(16), 1, 'in.batch.1', 'event', '{"v":1}', \(now), 7),
                    (randomblob(16), 1, 'in.batch.2', 'event', NULL, \(now + 1), 7),
                    (randomblob(16), 1, 'not.in.batch', 'event', NULL, \(now + 2), NULL),
                    (randomblob(16), 1, 'in.batch.3', 'event', NULL, \(now + 3), 7);
                """)
        }
        let transport = RecordingTransport()
        var configuration = transport.configuration(databaseDirectory: directory.url)
        configuration.policyURL = nil
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.flush().error == nil)
        let batches = transport.batches
        let first = try #require(batches.first)
        #expect(first.id == batchID)
        #expect(first.events.map(\.name) == ["in.batch.1", "in.batch.2", "in.batch.3"])
        #expect(batches.dropFirst().flatMap(\.events).map(\.name) == ["not.in.batch"])
        await logger.close()
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.int("SELECT count(*) FROM point_events") == 0)
        #expect(try reader.int("SELECT count(*) FROM upload_batches") == 0)
    }

    @Test("A new batch records the range of each table it holds, and an empty range for a table it does not")
    func newBatchRecordsItsRanges() async throws {
        let directory = TemporaryDirectory()
        let transport = RecordingTransport()
        var configuration = transport.configuration(databaseDirectory: directory.url)
        configuration.policyURL = nil
        configuration.upload.countThreshold = 10_000
        configuration.upload.initialBackoff = 3_600  // no retry while the test reads the batch
        configuration.upload.maxBackoff = 3_600
        transport.enqueue(.status(503))  // the first upload fails: its batch stays, with its ranges
        let logger = try NFLogger(configuration: configuration)
        for index in 0..<5 { #expect(await logger.logEvent(name: "e.\(index)").isRecorded) }
        #expect(await logger.flush().error != nil)
        let reader = try DatabaseReader(directory.databaseURL)
        let batch = try #require(try reader.rows("SELECT * FROM upload_batches").first)
        let ids = try reader.rows("SELECT id FROM point_events ORDER BY id").compactMap { ($0["id"] ?? nil) as? Int64 }
        #expect(ids.count == 5)
        #expect(batch["point_first"] as? Int64 == ids.first)
        #expect(batch["point_last"] as? Int64 == ids.last)
        #expect(batch["span_first"] as? Int64 == 1)
        #expect(batch["span_last"] as? Int64 == 0)
        #expect(try reader.int("SELECT count(*) FROM point_events WHERE batch_id = \(batch["id"] as? Int64 ?? -1)") == 5)
        await logger.close()
    }
}
