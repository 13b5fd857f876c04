import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// A Hummingbird server on 127.0.0.1 for tests that need one beside the collector (a backend, a
/// page host, a misbehaving collector): started on `port` (0: the system picks), stopped
/// gracefully.
final class LoopbackServer: Sendable {
    let url: URL
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(url: URL, group: ServiceGroup, task: Task<Void, any Error>) {
        (self.url, self.group, self.task) = (url, group, task)
    }

    static func start(_ router: Router<BasicRequestContext>, port: Int = 0, label: String) async throws -> LoopbackServer {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                              onServerRunning: { listening.yield($0.localAddress?.port ?? 0); listening.finish() }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), bound > 0, let url = URL(string: "http://127.0.0.1:\(bound)") else {
            task.cancel()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(label) did not start"])
        }
        return LoopbackServer(url: url, group: group, task: task)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}
