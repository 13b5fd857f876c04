import CollectorTestSupport
import Foundation
import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing

/// Several `nflog-collector serve --postgres URL` processes over one PostgreSQL database, as behind
/// a load balancer: the same batches reach different collectors at the same instant (a device's
/// retry racing its original across two collectors), and every event is stored once, every
/// duplicate counted once, in the stats and in the answers.
@Suite("Several collectors over one PostgreSQL",
       .enabled(if: TestDatabase.serverURL != nil,
                "NFLOG_POSTGRES_URL is not set: the several-collectors test needs a PostgreSQL server (scripts/postgres start DIR prints a URL)"),
       .serialized)
struct SeveralCollectorsTests {
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("nflog-collector")

    @Test("Every batch sent to two collectors at once, some a third time: each event stored once, stored + duplicates = sent",
          arguments: [1, 2, 4])
    func sameBatchesToSeveralCollectors(collectors count: Int) async throws {
        try await TestDatabase.with { url in
            var collectors: [CollectorProcess] = []
            defer { for collector in collectors { collector.stop() } }
            for _ in 0..<count { collectors.append(try await CollectorProcess.start(postgres: url)) }

            // 40 batches of 50 events; each batch after the first repeats the last 5 events of the
            // one before (a batch re-formed on the device), so duplicates also cross batches.
            let batches = try Batches(count: 40, events: 50, overlap: 5)
            let transport = DefaultHTTPTransport(timeout: hangLimitSeconds)
            var all: [Answer] = []
            // Each batch to collectors i and i+1 at the same instant; every third also to i+2 at
            // that instant (a retry whose original's answer was lost). Eight batches at a time.
            try await withThrowingTaskGroup(of: [Answer].self) { group in
                for (index, body) in batches.bodies.enumerated() {
                    if index >= 8, let answers = try await group.next() { all += answers }
                    let targets = (index % 3 == 0 ? [0, 1, 2] : [0, 1]).map { collectors[(index + $0) % count] }
                    group.addTask {
                        try await withThrowingTaskGroup(of: Answer.self) { sends in
                            for collector in targets {
                                sends.addTask { try await collector.upload(body, transport: transport) }
                            }
                            return try await sends.reduce(into: []) { $0.append($1) }
                        }
                    }
                }
                for try await answers in group { all += answers }
            }
            // Then retries of every fifth batch, one after the other, to yet another collector.
            for index in stride(from: 0, to: batches.bodies.count, by: 5) {
                all.append(try await collectors[(index + 3) % count].upload(batches.bodies[index], transport: transport))
            }

            let sent = all.reduce(0) { $0 + $1.events }
            let unique = batches.uniqueEvents
            let uploads = all.count, accepted = all.reduce(0) { $0 + $1.accepted }, duplicates = all.reduce(0) { $0 + $1.duplicates }
            let expectedUploads = 40 * 2 + 14 + 8  // pairs, the third sends, the later retries
            #expect(uploads == expectedUploads)
            #expect(sent == uploads * 50)
            // The answers: the accepted sum to the distinct events, the rest were duplicates.
            #expect(accepted == unique)
            #expect(duplicates == sent - unique)
            // Every collector reads the same totals from the shared database.
            for collector in collectors {
                let stats = try await collector.stats(transport: transport)
                #expect(stats.eventsStored == unique, "collector \(collector.url): \(stats)")
                #expect(stats.duplicatesDropped == sent - unique, "collector \(collector.url): \(stats)")
                #expect(stats.eventsStored + stats.duplicatesDropped == sent)
                #expect(stats.batches == 40 && stats.requests == uploads, "collector \(collector.url): \(stats)")
                #expect(stats.eventsByName == ["test.point": unique])
            }
            // And each event is there, asked through another collector than the last.
            #expect(try await collectors[count - 1].missing(batches.ids, transport: transport) == [])
            // Nothing was stored twice: the export holds each uuid once.
            let exported = try await collectors[0].exportedIDs(transport: transport)
            #expect(exported.count == unique && Set(exported).count == unique)
        }
    }
}

/// What a collector answered one upload.
struct Answer: Sendable {
    let events: Int
    let accepted: Int
    let duplicates: Int
}

/// The test's batches, gzip bodies ready to send.
struct Batches: Sendable {
    let bodies: [Data]
    let ids: [String]

    var uniqueEvents: Int { ids.count }

    init(count: Int, events: Int, overlap: Int) throws {
        var all: [String] = [], bodies: [Data] = []
        var previous: [String] = []
        for number in 0..<count {
            let carried = Array(previous.suffix(overlap))
            let fresh = (0..<(events - carried.count)).map { _ in UUID().uuidString.lowercased() }
            let uuids = carried + fresh
            all += fresh
            previous = uuids
            let session = UUID().uuidString.lowercased()
            let records = uuids.enumerated().map { index, uuid in
                #"{"uuid":"\#(uuid)","session":"\#(session)","name":"test.point","kind":"point","type":"event","timestamp":\#(1_750_000_000_000 + number * 100 + index),"parameters":{"index":\#(index)}}"#
            }
            let json = #"{"version":1,"batch_id":"\#(UUID().uuidString.lowercased())","sent_at":1750000009000,"sdk":{"name":"NFLogger","version":"0.1.0"},"context":{"app_id":"com.example.scale","app_version":"1.0","os_name":"Linux","os_version":"6","locale":"en","sessions":[{"id":"\#(session)","started_at":1750000000000}]},"events":[\#(records.joined(separator: ","))]}"#
            bodies.append(Data(try Gzip.compress(Array(json.utf8), level: 6)))
        }
        self.bodies = bodies
        self.ids = all
    }
}

/// One `nflog-collector serve --port 0 --postgres URL` child process, in development mode (app
/// key dev-key, read token dev-read-token).
final class CollectorProcess: Sendable {
    let url: URL
    private let process: ChildProcess
    let log: URL

    private init(url: URL, process: ChildProcess, log: URL) {
        self.url = url
        self.process = process
        self.log = log
    }

    static func start(postgres: String) async throws -> CollectorProcess {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-several-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = ChildProcess()
        process.executableURL = SeveralCollectorsTests.executable
        process.arguments = ["serve", "--port", "0", "--postgres", postgres, "--pool-size", "4", "--rate-limit", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        let first = await Child.firstLine(of: output)
        guard first.hasPrefix("listening on "), let url = URL(string: String(first.dropFirst("listening on ".count))) else {
            process.terminate()
            let stderr = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw CollectorProcessError("the collector did not start: \(first.isEmpty ? "no output" : first)\n\(stderr)")
        }
        return CollectorProcess(url: url, process: process, log: log)
    }

    func upload(_ body: Data, transport: DefaultHTTPTransport) async throws -> Answer {
        let response = try await transport.send(TransportRequest(
            url: url.appendingPathComponent("v1/events"), method: "POST",
            headers: [WireProtocol.appKeyHeader: "dev-key", "Content-Encoding": "gzip", "Content-Type": "application/json"],
            body: body))
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any] ?? [:]
        guard response.status == 200, let accepted = object["accepted"] as? Int, let duplicates = object["duplicates"] as? Int else {
            throw CollectorProcessError("\(url) answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        let events = FaultInjectingTransport.peek(body).1
        return Answer(events: events, accepted: accepted, duplicates: duplicates)
    }

    func stats(transport: DefaultHTTPTransport) async throws -> CollectorStats {
        let body = try await read("v1/stats", query: "app=dev", transport: transport)
        return try JSONDecoder().decode(CollectorStats.self, from: body)
    }

    /// The ids among `ids` that the collector has not stored (POST /v1/events/lookup).
    func missing(_ ids: [String], transport: DefaultHTTPTransport) async throws -> [String] {
        let response = try await transport.send(TransportRequest(
            url: try Self.url(url, "v1/events/lookup", query: "app=dev"), method: "POST",
            headers: ["Authorization": "Bearer dev-read-token", "Content-Type": "application/json"],
            body: try JSONSerialization.data(withJSONObject: ["uuids": ids])))
        guard response.status == 200, let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let missing = object["missing"] as? [String] else {
            throw CollectorProcessError("lookup: \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return missing
    }

    /// Every stored event's uuid, page by page through GET /v1/export (JSON lines; the
    /// X-NFLog-Next-After header names the next page while a page is full).
    func exportedIDs(transport: DefaultHTTPTransport) async throws -> [String] {
        var ids: [String] = []
        var after = "0"
        while true {
            let response = try await transport.send(TransportRequest(
                url: try Self.url(url, "v1/export", query: "app=dev&after=\(after)&limit=500"), method: "GET",
                headers: ["Authorization": "Bearer dev-read-token"], body: Data()))
            guard response.status == 200 else {
                throw CollectorProcessError("export: \(response.status) \(String(decoding: response.body, as: UTF8.self))")
            }
            for line in response.body.split(separator: 10) where !line.isEmpty {
                guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                      let uuid = object["uuid"] as? String else {
                    throw CollectorProcessError("export line without a uuid: \(String(decoding: line, as: UTF8.self))")
                }
                ids.append(uuid.lowercased())
            }
            guard let next = response.header(WireProtocol.nextPageHeader) else { return ids }
            after = next
        }
    }

    private func read(_ path: String, query: String, transport: DefaultHTTPTransport) async throws -> Data {
        let response = try await transport.send(TransportRequest(
            url: try Self.url(url, path, query: query), method: "GET",
            headers: ["Authorization": "Bearer dev-read-token"], body: Data()))
        guard response.status == 200 else {
            throw CollectorProcessError("\(path): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return response.body
    }

    private static func url(_ base: URL, _ path: String, query: String) throws -> URL {
        guard let url = URL(string: base.appendingPathComponent(path).absoluteString + "?" + query) else {
            throw CollectorProcessError("no URL for \(path)")
        }
        return url
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: log)
    }
}

struct CollectorProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
