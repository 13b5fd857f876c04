public import Foundation
public import Logging
public import NFLogCollector
import NFLogSupport
import NFLoggerTesting

/// A real collector running inside the test process on 127.0.0.1 and an ephemeral port, with its
/// own SQLite file: for app developers' integration tests of their logging, and for the SDK's own.
/// (For unit tests, `NFLoggerTesting`'s `RecordingTransport` needs no server.)
///
/// ```swift
/// let collector = try await TestCollector.start()
/// var configuration = Configuration(databaseURL: …, appID: "app", appVersion: "1")
/// configuration.uploadURL = collector.eventsURL
/// configuration.appKey = TestCollector.appKey
/// …
/// let stats = try await collector.stats()
/// let names = try await collector.exportedEvents().map(\.event.name)
/// let frames = try await collector.exportedAggregates().filter { $0.name == "perf.frame" }
/// await collector.stop()
/// ```
public final class TestCollector: Sendable {
    /// The key the test collector accepts (development mode).
    public static let appKey = "dev-key"
    /// The app its events are stored under.
    public static let app = "dev"
    /// The read token the test collector accepts for ``app`` (development mode): stats, report,
    /// lookup and export over HTTP take it as `Authorization: Bearer …`.
    public static let readToken = WireProtocol.developmentReadToken

    /// The base URL, such as `http://127.0.0.1:43117`.
    public let url: URL
    /// Where batches go: `url` + `/v1/events`.
    public var eventsURL: URL { url.appendingPathComponent("v1/events") }
    /// The collector's database file.
    public let databasePath: String
    public let store: SQLiteEventStore
    private let server: CollectorServer
    private let task: Task<Void, any Error>

    private init(url: URL, databasePath: String, store: SQLiteEventStore, server: CollectorServer, task: Task<Void, any Error>) {
        self.url = url
        self.databasePath = databasePath
        self.store = store
        self.server = server
        self.task = task
    }

    /// Starts a collector and returns once it accepts connections.
    /// - Parameters:
    ///   - databasePath: the SQLite file; default: a new file in a new temporary directory.
    ///   - configuration: limits and keys; its `host` is forced to 127.0.0.1 and its port to
    ///     `port` (0 picks a free one).
    ///   - logger: where the collector logs; default: warnings and errors to the console.
    ///   - durableCommits: fsync every acknowledged batch, as `nflog-collector serve` does;
    ///     off by default: a test's collector need not survive a power cut.
    ///   - readTimeLimit: how long one read (a report, a lookup, an export page) may run.
    public static func start(databasePath: String? = nil, port: Int = 0,
                             configuration: CollectorConfiguration = CollectorConfiguration(),
                             logger: Logger? = nil, durableCommits: Bool = false,
                             readTimeLimit: Duration = .seconds(30)) async throws -> TestCollector {
        let path = databasePath ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("nflog-test-collector-\(UUID().uuidString).sqlite").path
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = port
        let store = try SQLiteEventStore(path: path, durableCommits: durableCommits, readTimeLimit: readTimeLimit)
        let server = try CollectorServer(configuration: configuration, store: store, logger: logger)
        let (urls, continuation) = AsyncStream<URL>.makeStream()
        let task = Task {
            defer { continuation.finish() }
            try await server.run { url in continuation.yield(url) }
        }
        var iterator = urls.makeAsyncIterator()
        guard let url = await iterator.next() else {
            // The server ended before listening: report why.
            try await task.value
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the test collector stopped before listening"])
        }
        return TestCollector(url: url, databasePath: path, store: store, server: server, task: task)
    }

    /// The port it listens on.
    public var port: Int { url.port ?? 0 }

    /// The test app's totals.
    public func stats() async throws -> CollectorStats {
        try await store.stats(app: Self.app)
    }

    /// Every stored event of every app, in the order they were stored, as the export command
    /// prints them, typed.
    public func exportedEvents() async throws -> [ExportedEvent] {
        let lines = LineCollector()
        try await store.exportEvents(app: nil) { lines.append($0) }
        return try lines.all.map { try ExportedEvent(line: $0) }
    }

    /// Every stored aggregate of every app, in the order they were stored, as
    /// `nflog-collector export --aggregates` prints them, typed.
    public func exportedAggregates() async throws -> [ExportedAggregate] {
        let lines = LineCollector()
        try await store.exportAggregates(app: nil) { lines.append($0) }
        return try lines.all.map { try ExportedAggregate(line: $0) }
    }

    /// The test app's report, as `GET /v1/report` answers it; `filter` narrows it (a time range
    /// and an app version every section, a dimension the aggregates).
    public func report(filter: ReportFilter = ReportFilter()) async throws -> AnalyticsReport {
        try await store.report(app: Self.app, filter: filter)
    }

    /// Stops serving gracefully (requests in flight complete) and closes the store.
    public func stop() async {
        await server.shutdown()
        _ = await task.result
        await store.close()
    }
}

/// Collects export lines from the store's queue.
private final class LineCollector: @unchecked Sendable {
    // @unchecked: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [[UInt8]] = []

    func append(_ line: [UInt8]) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}
