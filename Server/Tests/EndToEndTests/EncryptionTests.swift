import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
import NFLogTestSupport

/// Encryption at rest, through the real SDK, a real SQLite file and a real collector.
@Suite("Encryption at rest")
struct EncryptionTests {
    static let marker = "MARKER-7f3c1e-secret-address"

    /// Every byte of the database files (the log included), to search for plaintext.
    static func fileBytes(_ scratch: TemporaryDirectory) -> Data {
        var all = Data()
        for suffix in ["", "-wal", "-journal"] {
            if let data = FileManager.default.contents(atPath: scratch.databaseURL.path + suffix) { all.append(data) }
        }
        return all
    }

    static func contains(_ data: Data, _ text: String) -> Bool {
        data.range(of: Data(text.utf8)) != nil
    }

    /// Logs point events and spans (start and end parameters) carrying the marker.
    static func logMarked(_ logger: NFLogger, count: Int) async {
        for index in 0..<count {
            #expect(await logger.logEvent(name: "form.submit", parameters: ["address": marker, "index": index]).isRecorded)
            let (span, _) = await logger.startEvent(name: "screen.view", parameters: ["note": marker])
            #expect(await span.end(parameters: ["result": marker]).isRecorded)
        }
    }

    @Test("Parameters are sealed: no trace of a marker in the database or its log, yet the collector gets them intact")
    func noPlaintextOnDisk() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.encryptionKey = EncryptionKey.generate()
        let logger = try NFLogger(configuration: configuration)
        await Self.logMarked(logger, count: 50)

        // While open (the log holds the newest pages) and after close.
        let whileOpen = Self.fileBytes(scratch)
        #expect(whileOpen.count > 10_000)
        #expect(!Self.contains(whileOpen, Self.marker))
        #expect(Self.contains(whileOpen, "form.submit"), "names stay readable: the check looks at the right files")

        let result = await deliverAll(logger)
        #expect(result.error == nil)
        await logger.close()
        #expect(!Self.contains(Self.fileBytes(scratch), Self.marker))

        let events = try await collector.exportedEvents()
        #expect(events.count == 100)
        let points = events.filter { $0.event.kind == .point }
        #expect(points.count == 50 && points.allSatisfy { $0.event.parameters["address"] == .string(Self.marker) })
        let spans = events.filter { $0.event.kind == .span }
        #expect(spans.allSatisfy { $0.event.endParameters["result"] == .string(Self.marker) })
        await collector.stop()
    }

    /// A collector and a closed, encrypted database holding `count` marked points and spans.
    func sealedDatabase(count: Int) async throws -> (TestCollector, TemporaryDirectory, Configuration) {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.encryptionKey = EncryptionKey.generate()
        let first = try NFLogger(configuration: configuration)
        await Self.logMarked(first, count: count)
        await first.close()
        return (collector, scratch, configuration)
    }

    @Test("Opening with the wrong key: a clear error, the data moved aside intact, a fresh database, the collector told")
    func wrongKeyMovesAside() async throws {
        var (collector, scratch, configuration) = try await sealedDatabase(count: 10)

        configuration.encryptionKey = EncryptionKey.generate()  // another key
        let second = try NFLogger(configuration: configuration)
        #expect(await second.logEvent(name: "after.rekey").isRecorded)
        let diagnostics = await second.diagnostics()
        let message = diagnostics.databaseResets.joined()
        #expect(message.contains("cannot be opened with the configured key") && message.contains("different key"), "\(message)")
        #expect(message.contains("held 20 events"), "\(message)")
        #expect(diagnostics.storedPointEvents == 1)

        // Nothing destroyed: the old file is beside the new one with its 20 events, still sealed.
        let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path)
            .first { $0.hasPrefix("events.sqlite.undecryptable-") && !$0.hasSuffix("-wal") })
        let reader = try SQLiteConnection(path: scratch.url.appendingPathComponent(aside).path, busyTimeoutMilliseconds: 1_000)
        #expect(try reader.scalarInt("SELECT count(*) FROM point_events") + reader.scalarInt("SELECT count(*) FROM span_events") == 20)

        #expect(await deliverAll(second).error == nil)
        await second.close()
        let stats = try await collector.stats()
        #expect(stats.eventsStored == 1 && stats.databaseResets == 1)
        await collector.stop()
    }

    @Test("An encrypted database opened with no key (a keychain not unlocked yet) is left alone; with the key it delivers all")
    func missingKeyLeavesItAlone() async throws {
        var (collector, scratch, configuration) = try await sealedDatabase(count: 3)
        let key = configuration.encryptionKey
        configuration.encryptionKey = nil
        let keyless = try NFLogger(configuration: configuration)
        let status = await keyless.logEvent(name: "plain.again", parameters: ["k": "v"])
        guard case .failed(.storage(let error)) = status else {
            Issue.record("expected a storage failure, got \(status)")
            return
        }
        #expect("\(error)".contains("no encryption key is configured"), "\(error)")
        await keyless.close()
        #expect(try !FileManager.default.contentsOfDirectory(atPath: scratch.url.path).contains { $0.contains("undecryptable") })

        configuration.encryptionKey = key
        let keyed = try NFLogger(configuration: configuration)
        #expect(await deliverAll(keyed).error == nil)
        await keyed.close()
        #expect(try await collector.stats().eventsStored == 6)
        await collector.stop()
    }

    @Test("Another key while another live process has the database open: left alone, moved aside once it is gone")
    func wrongKeyWhileSharedIsLeftAlone() async throws {
        var (collector, scratch, configuration) = try await sealedDatabase(count: 2)
        // Register a live process (this test's parent) as having the file open.
        let connection = try SQLiteConnection(path: scratch.databaseURL.path, busyTimeoutMilliseconds: 1_000)
        try connection.execute("INSERT INTO open_epochs (epoch, pid, opened_ms) VALUES (42, \(getppid()), 0)")
        configuration.encryptionKey = EncryptionKey.generate()
        let other = try NFLogger(configuration: configuration)
        let status = await other.logEvent(name: "after.rekey")
        guard case .failed(.storage(let error)) = status else {
            Issue.record("expected a storage failure, got \(status)")
            return
        }
        #expect("\(error)".contains("another process has it open"), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter { $0.contains("undecryptable") }.isEmpty)

        try connection.execute("DELETE FROM open_epochs WHERE epoch = 42")  // that process is gone
        #expect(await other.logEvent(name: "after.rekey").isRecorded)
        #expect(await other.diagnostics().databaseResets.count == 1)
        await other.close()
        await collector.stop()
    }

    @Test("Turning encryption on for an existing database seals what it holds, and it is still delivered")
    func encryptsExistingDatabase() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        let plain = try NFLogger(configuration: configuration)
        await Self.logMarked(plain, count: 20)
        await plain.close()
        #expect(Self.contains(Self.fileBytes(scratch), Self.marker), "the plaintext database holds the marker")

        configuration.encryptionKey = EncryptionKey.generate()
        let sealed = try NFLogger(configuration: configuration)
        #expect(await sealed.logEvent(name: "now.sealed", parameters: ["address": Self.marker]).isRecorded)
        #expect(!Self.contains(Self.fileBytes(scratch), Self.marker))
        #expect(await deliverAll(sealed).error == nil)
        await sealed.close()
        let events = try await collector.exportedEvents()
        #expect(events.count == 41)
        #expect(events.filter { $0.event.parameters["address"] == .string(Self.marker) }.count == 21)
        await collector.stop()
    }

    @Test("Values altered in the file, or written in plaintext, are quarantined on the device (sealed, both columns kept), never sent")
    func tamperedRowsAreQuarantined() async throws {
        let (collector, scratch, configuration) = try await sealedDatabase(count: 5)
        do {
            let connection = try SQLiteConnection(path: scratch.databaseURL.path, busyTimeoutMilliseconds: 1_000)
            // Flip one byte of a point's sealed parameters and of a span's sealed end parameters,
            // as a damaged or tampered file would; and write one point's parameters in plaintext,
            // as a process without the key would.
            for (table, column, offset) in [("point_events", "parameters", 0), ("span_events", "end_parameters", 0)] {
                let row = try #require(try connection.prepare("SELECT id, \(column) FROM \(table) ORDER BY id LIMIT 1 OFFSET \(offset)")
                    .collect { ($0.int64(at: 0), $0.blob(at: 1) ?? []) }.first)
                var altered = row.1
                altered[altered.count - 1] ^= 0x01
                let update = try connection.prepare("UPDATE \(table) SET \(column) = ? WHERE id = ?")
                try update.bindBlob(altered, at: 1)
                try update.bind(row.0, at: 2)
                try update.run()
            }
            let plaintext = try connection.prepare("UPDATE point_events SET parameters = ? WHERE id = (SELECT max(id) FROM point_events)")
            try plaintext.bindBlob(Array(#"{"address":"\#(Self.marker)"}"#.utf8), at: 1)
            try plaintext.run()
        }

        let second = try NFLogger(configuration: configuration)
        let result = await deliverAll(second)
        #expect(result.error == nil)
        #expect(await second.diagnostics().quarantinedEvents == 3)
        await second.close()
        #expect(try await collector.stats().eventsStored == 7)

        // Both columns of the span are kept (two rows), each as stored; the plaintext one sealed.
        let reader = try SQLiteConnection(path: scratch.databaseURL.path, busyTimeoutMilliseconds: 1_000)
        #expect(try reader.scalarInt("SELECT count(*) FROM quarantined_events") == 4)
        #expect(try reader.scalarInt("SELECT count(*) FROM quarantined_events WHERE reason LIKE 'on the device: end parameters:%'") == 1)
        #expect(!Self.contains(Self.fileBytes(scratch), Self.marker), "no plaintext left in the files")
        await collector.stop()
    }

    @Test("Keys load from a file as 32 raw bytes, base64 or hex; anything else is a clear error")
    func keyFiles() throws {
        let scratch = TemporaryDirectory()
        let bytes = (0..<32).map { UInt8($0) }
        let forms: [(String, Data)] = [
            ("raw", Data(bytes)),
            ("base64", Data((Data(bytes).base64EncodedString() + "\n").utf8)),
            ("hex", Data(bytes.map { String(format: "%02x", $0) }.joined().utf8)),
        ]
        for (name, data) in forms {
            let url = scratch.url.appendingPathComponent(name)
            try data.write(to: url)
            #expect(throws: Never.self) { try EncryptionKey(contentsOf: url) }
        }
        let short = scratch.url.appendingPathComponent("short")
        try Data("c2hvcnQ=".utf8).write(to: short)
        #expect(throws: ConfigurationError.self) { try EncryptionKey(contentsOf: short) }
        #expect(throws: ConfigurationError.self) { try EncryptionKey(contentsOf: scratch.url.appendingPathComponent("missing")) }
        #expect("\(EncryptionKey.generate())".contains("redacted"))
    }
}
