import Dispatch
import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Synchronization

/// Each benchmark phase, measured with the SDK's public API (and, for the baseline, the same
/// SQLite wrapper and library the SDK uses).
enum Phases {
    static let noop: LogCompletion = { _ in }

    static func configuration(_ directory: URL, pending: Int = 200_000) -> Configuration {
        var configuration = Configuration(databaseURL: directory.appendingPathComponent("events.sqlite"), appID: "com.example.bench", appVersion: "1.0")
        configuration.limits.maxPendingEvents = pending
        configuration.limits.maxPendingBytes = max(16 << 20, pending * 400)
        configuration.limits.maxStoredEvents = 10_000_000
        configuration.limits.maxDatabaseBytes = 4 << 30
        return configuration
    }

    // MARK: 1. The log call, on the caller's thread

    /// One way of calling `logEvent` whose cost is measured.
    struct LogCallCase: Sendable {
        let key: String
        let label: String
        let mode: LogMode
        let completion: Bool
    }

    /// Times each `logEvent` call on this thread: median and p99 in nanoseconds per case.
    ///
    /// The cases take turns, in rounds of 1/5 of the calls each, so that a slower spell of this
    /// (virtual) machine falls on all of them alike rather than on whichever ran then.
    static func logCall(_ cases: [LogCallCase], calls: Int) async throws -> [(median: UInt64, p99: UInt64)] {
        var loggers: [NFLogger] = []
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        for item in cases {
            let directory = scratchDirectory("call")
            directories.append(directory)
            var configuration = configuration(directory, pending: calls + 10_000)
            configuration.mode = item.mode
            let logger = try NFLogger(configuration: configuration)
            _ = await logger.logEvent(name: "warm.up")  // the database is open
            for index in 0..<2_000 { logger.logEvent(name: "ui.tap", parameters: ["screen": "home", "button": "buy", "index": index], completion: nil) }
            _ = await logger.flush()
            loggers.append(logger)
        }
        let rounds = 5
        var samples = [[UInt64]](repeating: [], count: cases.count)
        for round in 0..<rounds {
            for (index, item) in cases.enumerated() {
                let logger = loggers[index]
                let handler = item.completion ? noop : nil
                var times = [UInt64](repeating: 0, count: calls / rounds)
                for call in times.indices {
                    let parameters: LogParameters = ["screen": "home", "button": "buy", "index": round * calls + call]  // built by the app, not timed
                    let start = nanoseconds()
                    logger.logEvent(name: "ui.tap", parameters: parameters, completion: handler)
                    times[call] = nanoseconds() - start
                }
                samples[index] += times
                _ = await logger.flush()  // this case's writes are done before the next case runs
            }
        }
        for logger in loggers { await logger.close() }
        return samples.map { times in
            let sorted = times.sorted()
            return (percentile(50, sorted), percentile(99, sorted))
        }
    }

    /// The median of an empty timing (two clock reads), which every log-call sample includes.
    static func timerOverhead(samples count: Int) -> UInt64 {
        var samples = [UInt64](repeating: 0, count: count)
        for index in samples.indices {
            let start = nanoseconds()
            samples[index] = nanoseconds() - start
        }
        samples.sort()
        return percentile(50, samples)
    }

    // MARK: 2. Durable throughput

    /// Events per second from the first log call to the last commit, from one producer keeping
    /// at most 10,000 events uncommitted; every call must have been recorded.
    static func durable(events: Int) async throws -> Double {
        let directory = scratchDirectory("durable")
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await durable(events: events, configuration: configuration(directory), phase: "durable")
    }

    /// Events per second from the first log call to the last commit with this configuration.
    static func durable(events: Int, configuration: Configuration, phase: String) async throws -> Double {
        let logger = try NFLogger(configuration: configuration)
        _ = await logger.logEvent(name: "warm.up")
        let elapsed = await produce(logger, events: events)
        let recorded = await logger.diagnostics().recorded
        await logger.close()
        guard recorded == events + 1 else { throw BenchError("\(phase): \(recorded - 1) of \(events) events recorded") }
        return Double(events) / seconds(elapsed)
    }

    /// Logs `events` typical point events from one thread as an app would, without completion
    /// handlers, keeping at most `window` of them uncommitted: every 1,000th call carries a
    /// completion, and completions arrive in commit order. Returns the time to the last commit.
    static func produce(_ logger: NFLogger, events: Int, window: Int = 10_000) async -> Duration {
        let stride = 1_000
        let start = ContinuousClock.now
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let tokens = DispatchSemaphore(value: max(1, window / stride))
            DispatchQueue.global().async {
                for index in 0..<events {
                    let parameters: LogParameters = ["screen": "home", "button": "buy", "index": index]
                    guard index % stride == stride - 1 || index == events - 1 else {
                        logger.logEvent(name: "ui.tap", parameters: parameters)
                        continue
                    }
                    tokens.wait()
                    let last = index == events - 1
                    logger.logEvent(name: "ui.tap", parameters: parameters) { _ in
                        tokens.signal()
                        if last { done.resume() }
                    }
                }
            }
        }
        return ContinuousClock.now - start
    }

    // MARK: 3. The raw SQLite baseline

    /// Rows of the point table's shape inserted with a prepared statement, 1,000 per transaction,
    /// WAL and synchronous=NORMAL, through the same wrapper and libsqlite3 the SDK uses.
    static func sqliteBaseline(rows: Int) throws -> Double {
        let directory = scratchDirectory("baseline")
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try SQLiteConnection(path: directory.appendingPathComponent("raw.sqlite").path, busyTimeoutMilliseconds: 5_000)
        try connection.enableWriteAheadLog()
        try connection.execute("""
            CREATE TABLE point_events (id INTEGER PRIMARY KEY, uuid BLOB NOT NULL, session_id INTEGER NOT NULL, name TEXT NOT NULL,
                type TEXT NOT NULL, parameters TEXT, timestamp_ms INTEGER NOT NULL, priority INTEGER NOT NULL DEFAULT 0, batch_id INTEGER);
            CREATE INDEX point_events_batch ON point_events(batch_id) WHERE batch_id IS NOT NULL;
            """)
        let insert = try connection.prepare("""
            INSERT INTO point_events (uuid, session_id, name, type, parameters, timestamp_ms, priority) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        // Each transaction's rows (a random uuid, the parameters JSON) are made before its clock
        // starts, so the baseline times SQLite alone.
        var generator = SystemRandomNumberGenerator()  // UUID() reads /dev/urandom each time: slow to prepare
        var uuids = [UUID](repeating: UUID.nilUUID, count: 1_000)
        var parameters = [String](repeating: "", count: 1_000)
        var elapsed = Duration.zero
        var row = 0
        while row < rows {
            let count = min(1_000, rows - row)
            for index in 0..<count {
                uuids[index] = UUID(uuid: unsafeBitCast((generator.next() as UInt64, generator.next() as UInt64), to: uuid_t.self))
                parameters[index] = #"{"screen":"home","button":"buy","index":\#(row + index)}"#
            }
            let start = ContinuousClock.now
            try connection.transaction { () throws(SQLiteError) in
                for index in 0..<count {
                    try insert.bind(uuids[index], at: 1)
                    try insert.bind(Int64(1), at: 2)
                    try insert.bind("ui.tap", at: 3)
                    try insert.bind("event", at: 4)
                    try insert.bind(parameters[index], at: 5)
                    try insert.bind(Int64(1_750_000_000_000 + row + index), at: 6)
                    try insert.bind(Int64(0), at: 7)
                    try insert.run()
                }
            }
            elapsed += ContinuousClock.now - start
            row += count
        }
        return Double(rows) / seconds(elapsed)
    }

    // MARK: 4. End to end

    /// One end-to-end run's figures.
    struct EndToEnd {
        let seconds: Double
        let eventsPerSecond: Double
        let wireBytesPerEvent: Double
        let compressionRatio: Double
    }

    /// The transports the end-to-end phase compares while both exist on Linux.
    enum Transport: String, CaseIterable {
        /// `DefaultHTTPTransport`: async-http-client on Linux.
        case standard = "default"
        /// FoundationNetworking's `URLSession` (libcurl underneath), the default before issue 12.
        case urlSession = "urlsession"

        func make() -> any HTTPTransport {
            switch self {
            case .standard: DefaultHTTPTransport()
            case .urlSession: URLSessionTransport()
            }
        }
    }

    /// ``InstructionCount/deliveryCost(calls:collector:key:active:)`` against a collector on
    /// 127.0.0.1 in this process (the counted app is another process).
    static func deliveryCost(calls: Int, active: Double) async throws -> Double? {
        let (collector, collectorDirectory) = try await TestCollector.startScratch()
        let delivery = Result { try InstructionCount.deliveryCost(calls: calls, collector: collector.eventsURL, key: TestCollector.appKey, active: active) }
        await collector.stop(removing: collectorDirectory)
        return try delivery.get()
    }

    /// N events logged and delivered to a collector on 127.0.0.1 (in this process, over HTTP).
    static func endToEnd(events: Int, transport kind: Transport = .standard) async throws -> EndToEnd {
        let (collector, collectorDirectory) = try await TestCollector.startScratch()
        let directory = scratchDirectory("e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = configuration(directory)
        configuration.uploadURL = collector.eventsURL
        configuration.appKey = TestCollector.appKey
        let transport = CountingTransport(kind.make())
        configuration.network.transport = transport
        let logger = try NFLogger(configuration: configuration)
        _ = await logger.flush()  // the database is open, the uploader started

        let start = ContinuousClock.now
        let deadline = start + .seconds(max(60, events / 5_000))  // 12× the slowest run seen, for a clear failure
        _ = await produce(logger, events: events)
        var result = await logger.flush()
        while result.remainingEvents > 0 || result.error != nil {
            guard ContinuousClock.now < deadline else {
                await logger.close()
                await collector.stop(removing: collectorDirectory)
                throw BenchError("end to end: \(result.remainingEvents) events still undelivered at the deadline; last upload error: \(result.error.map { "\($0)" } ?? "none")")
            }
            try await Task.sleep(for: .milliseconds(5))
            result = await logger.flush()
        }
        let elapsed = seconds(ContinuousClock.now - start)
        await logger.close()
        let stored = try await collector.stats().eventsStored
        await collector.stop(removing: collectorDirectory)
        guard stored == events else { throw BenchError("end to end: \(stored) of \(events) events stored") }
        return EndToEnd(seconds: elapsed, eventsPerSecond: Double(events) / elapsed,
                        wireBytesPerEvent: Double(transport.requestBytes) / Double(events),
                        compressionRatio: try transport.compressionRatio())
    }

    // MARK: 5. The collector

    /// Events per second a collector ingests from 4 concurrent clients sending gzip batches of 500.
    static func collectorIngest(events: Int, batchSize: Int = 500, durableCommits: Bool) async throws -> Double {
        let (collector, collectorDirectory) = try await TestCollector.startScratch(durableCommits: durableCommits)
        let batches = try (0..<(events / batchSize)).map { try makeBatch(events: batchSize, batchNumber: $0) }
        let clients = 4
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    let transport = URLSessionTransport()
                    for index in stride(from: client, to: batches.count, by: clients) {
                        let response = try await transport.send(TransportRequest(url: collector.eventsURL, method: "POST",
                            headers: [WireProtocol.appKeyHeader: TestCollector.appKey, "Content-Encoding": "gzip",
                                      "Content-Type": "application/json"], body: batches[index]))
                        guard response.status == 200 else { throw BenchError("collector answered \(response.status)") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = seconds(ContinuousClock.now - start)
        let stored = try await collector.stats().eventsStored
        await collector.stop(removing: collectorDirectory)
        guard stored == batches.count * batchSize else { throw BenchError("collector: \(stored) of \(batches.count * batchSize) stored") }
        return Double(stored) / elapsed
    }

    /// A gzip batch of `events` typical events as the SDK sends them: UUIDv7 event ids (time
    /// first, so the collector's de-duplication index grows at its end), one session.
    /// A gzip batch of `events`: all the same point (`ui.tap`), or with `mixed`, what an app's
    /// batch holds more like: 8 names, 60% points, 25% network spans (3% abandoned), 15% use cases
    /// (10% given up), durations from 1 ms to about a minute, log-uniform, so that the hourly
    /// rollups see several names and spread duration buckets.
    static func makeBatch(events: Int, batchNumber: Int, mixed: Bool = false) throws -> Data {
        var random = SystemRandomNumberGenerator()
        func uuid(milliseconds: Int64) -> String {
            let ms = UInt64(milliseconds) & 0xFFFF_FFFF_FFFF
            let a: UInt64 = random.next(), b: UInt64 = random.next()
            let high = ms << 16 | 0x7000 | (a & 0x0FFF), low = 0x8000_0000_0000_0000 | (b >> 2)
            let hex = String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
            let characters = Array(hex)
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
        }
        let start = Int64(1_750_000_000_000 + batchNumber * events)
        let session = UUID().uuidString.lowercased()
        var body = #"{"version":1,"batch_id":"\#(uuid(milliseconds: start))","sent_at":\#(start + Int64(events)),"sdk":{"name":"NFLogger","version":"0.1.0"},"context":{"app_id":"com.example.bench","app_version":"1.0","os_name":"Linux","os_version":"6","locale":"en","sessions":[{"id":"\#(session)","started_at":\#(start)}]},"events":["#
        for index in 0..<events {
            if index > 0 { body += "," }
            let timestamp = start + Int64(index)
            let roll = Int.random(in: 0..<100, using: &random)
            if !mixed || roll < 60 {
                let name = mixed ? ["ui.tap", "screen.view", "cart.add", "search"][index % 4] : "ui.tap"
                body += #"{"uuid":"\#(uuid(milliseconds: timestamp))","session":"\#(session)","name":"\#(name)","kind":"point","type":"event","timestamp":\#(timestamp),"parameters":{"screen":"home","button":"buy","index":\#(index)}}"#
            } else {
                let network = roll < 85
                let name = network ? ["api.cart", "api.search", "api.user"][index % 3] : ["flow.checkout", "form.signup"][index % 2]
                let duration = (exp(Double.random(in: 0...11, using: &random)) * 1_000).rounded() / 1_000
                let abandoned = Int.random(in: 0..<100, using: &random) < (network ? 3 : 0)
                let end = !network && Int.random(in: 0..<10, using: &random) == 0 ? #","end_parameters":{"completed":false}"# : ""
                body += #"{"uuid":"\#(uuid(milliseconds: timestamp))","session":"\#(session)","name":"\#(name)","kind":"span","type":"\#(network ? "network" : "usecase")","timestamp":\#(timestamp),"start":\#(timestamp),"end":\#(timestamp + Int64(duration)),"duration_ms":\#(duration)\#(abandoned ? #","abandoned":true"# : "")\#(end),"parameters":{"index":\#(index)}}"#
            }
        }
        body += "]}"
        return Data(try Gzip.compress(Array(body.utf8), level: 6))
    }
}

extension String {
    /// Zeros in front, up to `width` characters.
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// Counts the request bytes the SDK sends (an estimate of the wire: the request line, the SDK's
/// headers, Host and Content-Length, the gzip body; not the response, not headers URLSession adds)
/// and keeps every 10th body, to measure the compression ratio after the clock stops.
final class CountingTransport: HTTPTransport {
    private let real: any HTTPTransport
    private let state = Mutex<(bytes: Int, requests: Int, samples: [Data])>((0, 0, []))

    init(_ real: any HTTPTransport) { self.real = real }

    var requestBytes: Int { state.withLock { $0.bytes } }
    var requests: Int { state.withLock { $0.requests } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let head = "POST \(request.url.path) HTTP/1.1\r\nHost: \(request.url.host ?? ""):\(request.url.port ?? 80)\r\nContent-Length: \(request.body.count)\r\n"
            + request.headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        state.withLock { state in
            state.bytes += head.utf8.count + request.body.count
            if state.requests % 10 == 0 { state.samples.append(request.body) }
            state.requests += 1
        }
        return try await real.send(request)
    }

    /// Inflated ÷ compressed size over the kept bodies.
    func compressionRatio() throws -> Double {
        let samples = state.withLock { $0.samples }
        var compressed = 0, inflated = 0
        for body in samples {
            compressed += body.count
            inflated += try Gzip.decompress(Array(body), maxOutputBytes: 64 << 20).count
        }
        return compressed > 0 ? Double(inflated) / Double(compressed) : 0
    }
}

extension TestCollector {
    /// A collector on 127.0.0.1 (a free port) in this process, its database in a scratch directory.
    static func startScratch(durableCommits: Bool = false) async throws -> (TestCollector, URL) {
        let directory = scratchDirectory("collector")
        return (try await TestCollector.start(databasePath: directory.appendingPathComponent("collector.sqlite").path,
                                              durableCommits: durableCommits), directory)
    }

    /// Stops it gracefully and deletes its database.
    func stop(removing directory: URL) async {
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A phase that could not measure what it should (events lost, a child that failed, a deadline).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
