import Foundation
import NFLoggerTesting
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("Multi-row inserts with lent bytes store each event's own values, with and without encryption")
struct MultiRowInsertTests {
    /// A logger that uploads only when flushed (so a drain's rows stay to be read), to `transport`.
    static func logger(in directory: TemporaryDirectory, _ transport: RecordingTransport,
                       encrypted: Bool = false) throws -> (NFLogger, Configuration) {
        var configuration = transport.configuration(databaseDirectory: directory.url)
        configuration.policyURL = nil
        configuration.upload.countThreshold = 10_000
        configuration.limits.busyTimeout = hangLimitSeconds
        if encrypted { configuration.encryptionKey = EncryptionKey.generate() }
        return (try NFLogger(configuration: configuration), configuration)
    }

    @Test("One drain of 85 varied events (a 64-row statement, a 16-row one, five single rows; encrypted or not; short and long texts; no parameters) uploads each with its own values, in order",
          arguments: [false, true])
    func variedValuesRoundTrip(encrypted: Bool) async throws {
        let directory = TemporaryDirectory()
        let transport = RecordingTransport()
        let (logger, configuration) = try Self.logger(in: directory, transport, encrypted: encrypted)
        #expect(await logger.logEvent(name: "open.first").isRecorded)
        let lock = try HeldWriteLock(configuration.databaseURL)
        let statuses = StatusLog()
        var expected: [(String, String, [String: LogValue])] = []
        for index in 0..<85 {
            let name = index % 3 == 0 ? "n.\(index)" : "a.rather.long.event.name.number.\(index).beyond.small.strings"
            let type = index % 2 == 0 ? "event" : "type_\(index)_long_enough_to_be_on_the_heap"
            var parameters: LogParameters = [:]
            var values: [String: LogValue] = [:]
            if index % 4 != 0 {
                parameters["index"] = index
                parameters["text"] = String(repeating: "x", count: index * 7)
                values["index"] = .integer(Int64(index))
                values["text"] = .string(String(repeating: "x", count: index * 7))
            }
            expected.append((name, type, values))
            logger.logEvent(name: name, type: type, parameters: parameters, completion: statuses.completion)
        }
        lock.release()
        await statuses.wait(for: 85)
        #expect(statuses.statuses.allSatisfy { $0.isRecorded })
        #expect(await logger.flush().error == nil)
        let events = transport.events.filter { $0.name != "open.first" }
        #expect(events.count == 85)
        let byName = Dictionary(events.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName.count == 85)
        for want in expected {
            let event = try #require(byName[want.0])
            #expect(event.type == want.1, "\(want.0)")
            #expect(event.parameters == want.2, "\(want.0)")
        }
        await logger.close()
    }

    @Test("One drain that alternates plain events with events in a transaction (the two column lists, in runs of 1 to 70) stores each with its own transaction columns, and row ids in call order")
    func plainAndLinkedRowsInOneDrain() async throws {
        let directory = TemporaryDirectory()
        let transport = RecordingTransport()
        let (logger, configuration) = try Self.logger(in: directory, transport)
        let (transaction, started) = await logger.beginTransaction(name: "checkout")
        #expect(started.isRecorded)
        let lock = try HeldWriteLock(configuration.databaseURL)
        let statuses = StatusLog()
        // Runs of plain and linked events, of lengths crossing the 64- and 16-row statements.
        var linked: [String: Bool] = [:]
        var order: [String] = []
        var index = 0
        for (run, length) in [1, 70, 3, 17, 64, 2, 1, 20].enumerated() {
            for _ in 0..<length {
                let name = "e.\(index)"
                let inTransaction = run % 2 == 1
                linked[name] = inTransaction
                order.append(name)
                if inTransaction {
                    transaction.logEvent(name: name, parameters: ["index": index], completion: statuses.completion)
                } else {
                    logger.logEvent(name: name, parameters: ["index": index], completion: statuses.completion)
                }
                index += 1
            }
        }
        lock.release()
        await statuses.wait(for: order.count)
        #expect(statuses.statuses.allSatisfy { $0.isRecorded })
        #expect(await logger.flush().error == nil)
        let events = transport.events.filter { $0.name.hasPrefix("e.") }
        #expect(events.map(\.name) == order)
        for event in events {
            let want = linked[event.name] ?? false
            #expect(event.transactionID == (want ? transaction.id : nil), "\(event.name)")
            #expect((event.parentSpanID != nil) == want, "\(event.name)")
            #expect(event.parameters["index"] == .integer(Int64(event.name.dropFirst(2)) ?? -1), "\(event.name)")
        }
        await logger.close()
    }
}
