import Foundation
import Hummingbird
import Logging
import NFLogger
import NFLoggerHummingbird
import ServiceLifecycle

/// The shopping app's backend, on 127.0.0.1: log in, sign up and order, each taking a little
/// server time. It runs an NFLogger of its own (another app instance of the same app, uploading
/// to the same collector) and is instrumented only with `NFLoggerMiddleware`: its handlers make no
/// logging call, yet each request becomes a server span in the app's transaction.
final class DemoBackend: Sendable {
    let url: URL
    let logger: NFLogger
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    private let directory: URL

    private init(url: URL, logger: NFLogger, group: ServiceGroup, task: Task<Void, any Error>, directory: URL) {
        (self.url, self.logger, self.group, self.task, self.directory) = (url, logger, group, task, directory)
    }

    static func start(collector: URL, appKey: String, pinning: CertificatePinning?, requestTimeout: Double) async throws -> DemoBackend {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-demo-backend-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration(databaseURL: directory.appendingPathComponent("events.sqlite"),
                                          appID: "com.example.shop.backend", appVersion: "1.0.0")
        configuration.uploadURL = collector.appendingPathComponent("v1/events")
        configuration.appKey = appKey
        configuration.upload.interval = 1
        configuration.upload.initialBackoff = 0.2
        configuration.upload.maxBackoff = 1
        configuration.upload.requestTimeout = requestTimeout
        configuration.network.pinning = pinning
        let logger = try NFLogger(configuration: configuration)

        let router = Router()
        router.middlewares.add(NFLoggerMiddleware(logger: logger))
        // Server time, log-normal around each route's median: a lookup, a write, a payment.
        for (path, median) in [("api/login", 6.0), ("api/signup", 12.0), ("api/order", 20.0)] {
            router.post(RouterPath(path)) { _, _ -> Response in
                let milliseconds = median * exp(0.35 * Self.normal())
                try await Task.sleep(for: .microseconds(Int(min(200, milliseconds) * 1_000)))
                return Response(status: .ok)
            }
        }
        var log = Logger(label: "nflog-demo.backend")
        log.logLevel = .warning
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { listening.yield($0.localAddress?.port ?? 0); listening.finish() }, logger: log)
        let group = ServiceGroup(configuration: .init(services: [app], logger: log))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0, let url = URL(string: "http://127.0.0.1:\(port)") else {
            task.cancel()
            throw DemoError("the demo's backend did not start")
        }
        return DemoBackend(url: url, logger: logger, group: group, task: task, directory: directory)
    }

    /// A standard normal draw (Box–Muller).
    private static func normal() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1), u2 = Double.random(in: 0..<1)
        return sqrt(-2 * log(u1)) * cos(2 * .pi * u2)
    }

    /// Stops serving, delivers what the backend logged, and reports it.
    func stop() async -> (diagnostics: Diagnostics, flushed: FlushResult) {
        await group.triggerGracefulShutdown()
        _ = await task.result
        let flushed = await logger.deliverAll()
        let diagnostics = await logger.diagnostics()
        await logger.close()
        try? FileManager.default.removeItem(at: directory)
        return (diagnostics, flushed)
    }
}
