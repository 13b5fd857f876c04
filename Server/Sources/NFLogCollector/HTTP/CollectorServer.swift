package import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
package import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import Synchronization

/// The collector: an HTTP server (Hummingbird) in front of an ``EventStore``.
///
/// ```swift
/// let server = try CollectorServer(configuration: configuration, store: SQLiteEventStore(path: "events.sqlite"))
/// try await server.run { url in print("listening on \(url)") }
/// ```
package final class CollectorServer: Sendable {
    package let configuration: CollectorConfiguration
    package let store: any EventStore
    private let logger: Logger
    /// Where retention says what it dropped: the given logger, else the console at info level
    /// (the server's own default logger is quiet, warnings only).
    private let retentionLogger: Logger
    /// The running service group, so ``shutdown()`` can stop it gracefully.
    private let group = Mutex<ServiceGroup?>(nil)

    /// - Throws: ``CollectorError/developmentModeNeedsLoopback(host:)`` when there are no real
    ///   keys and the host is not a loopback address; likewise
    ///   ``CollectorError/developmentReadTokenNeedsLoopback(host:)`` for the development read token.
    package init(configuration: CollectorConfiguration, store: any EventStore, logger: Logger? = nil) throws {
        let loopback = CollectorConfiguration.loopbackHosts.contains(configuration.host)
        if configuration.keys.isDevelopment && !loopback {
            throw CollectorError.developmentModeNeedsLoopback(host: configuration.host)
        }
        if configuration.readTokens.isDevelopment && !loopback {
            throw CollectorError.developmentReadTokenNeedsLoopback(host: configuration.host)
        }
        self.configuration = configuration
        self.store = store
        var quiet = Logger(label: "nflog-collector")
        quiet.logLevel = .warning
        self.logger = logger ?? quiet
        self.retentionLogger = logger ?? Logger(label: "nflog-collector.retention")
    }

    /// Serves until ``shutdown()`` is called (or, with `handleSignals`, until SIGINT or SIGTERM),
    /// then shuts down gracefully: requests in flight complete. Stop it with ``shutdown()``
    /// rather than by cancelling the task: SwiftNIO can trap when a serving task is cancelled
    /// while a just-accepted connection waits (swift-nio issue 3481).
    /// - Parameter onListening: called once with the base URL, such as `http://127.0.0.1:43117`.
    package func run(handleSignals: Bool = false, onListening: @escaping @Sendable (URL) async -> Void) async throws {
        let router = Router(context: CollectorRequestContext.self)
        CollectorRoutes(store: store, configuration: configuration, logger: logger).register(on: router)
        let host = configuration.host
        let scheme = configuration.tls == nil ? "http" : "https"
        let admission = ConnectionAdmission(maxConnections: configuration.connections.maxConnections)
        let limits = configuration.connections
        let http1 = HTTPServerBuilder { responder in
            LimitedHTTP1Channel(responder: responder, limits: limits, admission: admission)
        }
        let app = Application(
            router: router,
            server: try configuration.tls.map { try .tls(http1, tlsConfiguration: $0.configuration) } ?? http1,
            configuration: .init(address: .hostname(host, port: configuration.port), serverName: "nflog-collector"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shownHost = host.contains(":") ? "[\(host)]" : host
                if let url = URL(string: "\(scheme)://\(shownHost):\(port)") { await onListening(url) }
            },
            logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: app)]
        if let retention = configuration.retention {
            // After the server in the list, so stopped before it. Its run ends only on shutdown;
            // should it end otherwise, serving goes on.
            services.append(.init(service: RetentionScheduler(retention: retention, store: store, logger: retentionLogger),
                                  successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore))
        }
        let serviceGroup = ServiceGroup(configuration: .init(
            services: services, gracefulShutdownSignals: handleSignals ? [.sigterm, .sigint] : [], logger: logger))
        group.withLock { $0 = serviceGroup }
        try await serviceGroup.run()
    }

    /// Stops accepting connections, lets requests in flight finish, and makes ``run`` return.
    package func shutdown() async {
        await group.withLock { $0 }?.triggerGracefulShutdown()
    }
}
