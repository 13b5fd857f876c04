import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// A collector gone wrong, for the SDK's side of the contract: it serves `default.json` from a
/// policy directory as it is, unchecked (ours refuses to serve a policy that does not parse), so
/// a test can prove the SDK refuses a broken, expired or oversized policy and keeps the last
/// good one. Real HTTP on 127.0.0.1; no ETag, as some collectors do.
final class UncheckedPolicyServer: Sendable {
    private let server: LoopbackServer
    var url: URL { server.url }

    private init(server: LoopbackServer) {
        self.server = server
    }

    static func start(serving policies: PolicyDirectory) async throws -> UncheckedPolicyServer {
        let router = Router()
        let file = policies.url.appendingPathComponent("default.json")
        router.get("v1/policy") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: (try? Data(contentsOf: file)) ?? Data())))
        }
        return UncheckedPolicyServer(server: try await LoopbackServer.start(router, label: "unchecked-policy-server"))
    }

    func stop() async {
        await server.stop()
    }
}
