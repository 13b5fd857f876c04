package import Foundation
package import Logging
package import NFLogCollector

/// A ``CollectorServer`` serving a store on 127.0.0.1 from a task of its own: ``TestCollector``'s
/// engine over its SQLite file, and, over any ``EventStore`` (PostgreSQL too), the engine of the
/// package's own tests that run the collector on both stores.
package final class RunningCollector: Sendable {
    /// The base URL, such as `http://127.0.0.1:43117`.
    package let url: URL
    package let store: any EventStore
    private let server: CollectorServer
    private let task: Task<Void, any Error>
    /// Run after the store is closed (a test's throwaway database dropped, say).
    private let afterStop: @Sendable () async -> Void

    private init(url: URL, store: any EventStore, server: CollectorServer, task: Task<Void, any Error>,
                 afterStop: @escaping @Sendable () async -> Void) {
        self.url = url
        self.store = store
        self.server = server
        self.task = task
        self.afterStop = afterStop
    }

    /// Serves `store` and returns once the collector accepts connections. The collector owns the
    /// store from then on: ``stop()`` closes it, then runs `afterStop`. If it does not start, the
    /// store is closed and `afterStop` run before the error is thrown.
    /// - Parameters:
    ///   - configuration: its `host` is forced to 127.0.0.1 and its port to `port` (0 picks a free one).
    ///   - logger: where the collector logs; default: warnings and errors to the console.
    package static func start(store: any EventStore, port: Int = 0, configuration: CollectorConfiguration = CollectorConfiguration(),
                              logger: Logger? = nil,
                              afterStop: @escaping @Sendable () async -> Void = {}) async throws -> RunningCollector {
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = port
        do {
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
            return RunningCollector(url: url, store: store, server: server, task: task, afterStop: afterStop)
        } catch {
            await store.close()
            await afterStop()
            throw error
        }
    }

    /// The port it listens on.
    package var port: Int { url.port ?? 0 }

    /// Where batches go: `url` + `/v1/events`.
    package var eventsURL: URL { url.appendingPathComponent("v1/events") }

    /// The test app's totals (``TestCollector/app``).
    package func stats() async throws -> CollectorStats {
        try await store.stats(app: TestCollector.app)
    }

    /// Every stored event of every app, in the order they were stored, typed.
    package func exportedEvents() async throws -> [ExportedEvent] {
        let lines = LineCollector()
        try await store.exportEvents(app: nil) { lines.append($0) }
        return try lines.all.map { try ExportedEvent(line: $0) }
    }

    /// Every stored aggregate of every app, in the order they were stored, typed.
    package func exportedAggregates() async throws -> [ExportedAggregate] {
        let lines = LineCollector()
        try await store.exportAggregates(app: nil) { lines.append($0) }
        return try lines.all.map { try ExportedAggregate(line: $0) }
    }

    /// The test app's report, as `GET /v1/report` answers it.
    package func report(filter: ReportFilter = ReportFilter()) async throws -> AnalyticsReport {
        try await store.report(app: TestCollector.app, filter: filter)
    }

    /// Stops serving gracefully (requests in flight complete), closes the store, then runs the
    /// `afterStop` it was started with.
    package func stop() async {
        await server.shutdown()
        _ = await task.result
        await store.close()
        await afterStop()
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
