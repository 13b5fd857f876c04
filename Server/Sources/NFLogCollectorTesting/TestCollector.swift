public import Foundation
public import Logging
public import NFLogCollector
@_spi(NFLogShared) import NFLogSupport

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
    package let store: SQLiteEventStore
    private let running: RunningCollector
    /// The collector chose `databasePath` itself, so ``stop()`` removes it.
    private let ownsDatabase: Bool

    private init(databasePath: String, ownsDatabase: Bool, store: SQLiteEventStore, running: RunningCollector) {
        self.url = running.url
        self.databasePath = databasePath
        self.ownsDatabase = ownsDatabase
        self.store = store
        self.running = running
    }

    /// Starts a collector and returns once it accepts connections.
    /// - Parameters:
    ///   - databasePath: the SQLite file, left in place by ``stop()``; default: a new file in the
    ///     temporary directory, which ``stop()`` removes.
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
        let store = try SQLiteEventStore(path: path, durableCommits: durableCommits, readTimeLimit: readTimeLimit)
        let running = try await RunningCollector.start(store: store, port: port, configuration: configuration, logger: logger)
        return TestCollector(databasePath: path, ownsDatabase: databasePath == nil, store: store, running: running)
    }

    /// The port it listens on.
    public var port: Int { url.port ?? 0 }

    /// The test app's totals.
    public func stats() async throws -> CollectorStats {
        try await running.stats()
    }

    /// Every stored event of every app, in the order they were stored, as the export command
    /// prints them, typed.
    public func exportedEvents() async throws -> [ExportedEvent] {
        try await running.exportedEvents()
    }

    /// Every stored aggregate of every app, in the order they were stored, as
    /// `nflog-collector export --aggregates` prints them, typed.
    public func exportedAggregates() async throws -> [ExportedAggregate] {
        try await running.exportedAggregates()
    }

    /// The test app's report, as `GET /v1/report` answers it; `filter` narrows it (a time range
    /// and an app version every section, a dimension the aggregates).
    public func report(filter: ReportFilter = ReportFilter()) async throws -> AnalyticsReport {
        try await running.report(filter: filter)
    }

    /// Stops serving gracefully (requests in flight complete) and closes the store; removes the
    /// database when the collector made it (no `databasePath` given to ``start(databasePath:port:configuration:logger:durableCommits:readTimeLimit:)``).
    public func stop() async {
        await running.stop()
        guard ownsDatabase else { return }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: databasePath + suffix) }
    }
}
