public import Foundation

/// The SDK's own ``HTTPTransport``, used unless ``Configuration/Network/transport`` names another:
/// URLSession on Apple platforms (Apple's implementation), async-http-client elsewhere (a
/// keep-alive connection pool on SwiftNIO, where FoundationNetworking's URLSession can spin a
/// core after a dropped connection). Both refuse redirects and bound each request by `timeout`;
/// with ``CertificatePinning`` both trust only the pinned certificates.
///
/// Use it for your own requests to the collector, or wrap it to add behaviour of your own.
public final class DefaultHTTPTransport: HTTPTransport {
    #if canImport(AsyncHTTPClient)
    let base: HTTPClientTransport
    #else
    let base: URLSessionTransport
    #endif

    /// - Parameters:
    ///   - timeout: how long one request may take, from connecting to the last byte of the
    ///     answer, in seconds: 0.001 … 3,600 (a value outside is taken as the nearer bound).
    ///   - pinning: certificates to trust in place of the system's, if any.
    public init(timeout: TimeInterval = 30, pinning: CertificatePinning? = nil) {
        #if canImport(AsyncHTTPClient)
        base = HTTPClientTransport(timeout: timeout, pinning: pinning)
        #else
        base = URLSessionTransport(timeout: timeout, pinning: pinning)
        #endif
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await base.send(request)
    }

    /// A request timeout within what both transports take: 1 ms … an hour (NaN: 30 s), so no
    /// input traps.
    static func clamp(_ timeout: TimeInterval) -> TimeInterval {
        timeout.isNaN ? 30 : min(max(timeout, 0.001), 3_600)
    }

    /// Closes its connections now rather than when it is released; later requests fail.
    /// ``NFLogger/close(completion:)`` does this for the transport the logger made.
    public func shutdown() { base.shutdown() }
}
