import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// A collector gone wrong, for the SDK's side of the contract: it serves `default.json` from a
/// policy directory as it is, unchecked (ours refuses to serve a policy that does not parse), so
/// a test can prove the SDK refuses a broken, expired or oversized policy and keeps the last
/// good one. Real HTTP on 127.0.0.1; no ETag, as some collectors do.
final class UncheckedPolicyServer: Sendable {
    let url: URL
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(url: URL, group: ServiceGroup, task: Task<Void, any Error>) {
        self.url = url
        self.group = group
        self.task = task
    }

    static func start(serving policies: PolicyDirectory) async throws -> UncheckedPolicyServer {
        let router = Router()
        let file = policies.url.appendingPathComponent("default.json")
        router.get("v1/policy") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: (try? Data(contentsOf: file)) ?? Data())))
        }
        var logger = Logger(label: "unchecked-policy-server")
        logger.logLevel = .warning
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { listening.yield($0.localAddress?.port ?? 0); listening.finish() },
                              logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), let url = URL(string: "http://127.0.0.1:\(port)") else {
            task.cancel()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the unchecked policy server did not start"])
        }
        return UncheckedPolicyServer(url: url, group: group, task: task)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}
