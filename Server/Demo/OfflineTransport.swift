import Foundation
import NFLogger
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network as the simulated app sees it: unreachable until `online`, then the real thing.
struct OfflineTransport: HTTPTransport {
    let real: any HTTPTransport
    let online: ContinuousClock.Instant

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if ContinuousClock.now < online { throw URLError(.notConnectedToInternet) }
        return try await real.send(request)
    }
}
