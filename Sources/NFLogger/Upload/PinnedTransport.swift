import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The ``HTTPTransport`` used when ``Configuration/pinning`` is set: async-http-client, trusting
/// only the pinned certificates.
final class PinnedTransport: HTTPTransport {
    private let client: HTTPClient
    /// What the client trusts (read by a test: the pinned certificates replace the system's).
    let tls: TLSConfiguration
    private let timeout: TimeAmount
    /// Responses the SDK reads are small (a policy, an upload's answer); anything larger is refused.
    private static let maxResponseBytes = 1024 * 1024

    init(pinning: CertificatePinning, timeout: Duration) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(pinning.certificates)
        tls.certificateVerification = .fullVerification
        tls.minimumTLSVersion = .tlsv12
        self.tls = tls
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.httpVersion = .http1Only
        // Fail a request with the first connection error (a refused certificate above all): the
        // Uploader has its own backoff, and must see the failure rather than wait out a timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = .nanoseconds(Int64(clamping: timeout.nanoseconds))
    }

    // The client must be shut down before it is released; the shutdown keeps it alive until done.
    // A second shutdown (after ``shutdown()``) only reports that it already was.
    deinit { client.shutdown { _ in } }

    /// Closes the connections; later requests fail.
    func shutdown() { client.shutdown { _ in } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // Pinning means nothing over plain HTTP, and the app key would travel in clear.
        guard request.url.scheme?.lowercased() == "https" else {
            throw UntrustedCollector(host: request.url.host ?? "", detail: "the URL is \(request.url.scheme ?? "without a scheme"), not https; nothing was sent")
        }
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        do {
            let response = try await client.execute(outgoing, timeout: timeout)
            let body = try await response.body.collect(upTo: Self.maxResponseBytes)
            var headers: [String: String] = [:]
            for header in response.headers { headers[header.name] = header.value }
            return HTTPResponse(status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
        } catch let error as NIOSSLError {
            guard case .handshakeFailed = error else { throw error }
            throw UntrustedCollector(host: request.url.host ?? "", detail: "its certificate is not one of the pinned certificates (\(Self.reason(error)))")
        } catch let error as NIOSSLExtraError where error == .failedToValidateHostname {
            throw UntrustedCollector(host: request.url.host ?? "", detail: "its certificate does not name this host")
        }
    }

    /// BoringSSL's reason (`CERTIFICATE_VERIFY_FAILED`), without its error codes and source paths.
    static func reason(_ error: NIOSSLError) -> String {
        let text = "\(error)"
        guard let start = text.range(of: "OPENSSL_internal:")?.upperBound else { return "TLS handshake failed" }
        let reason = text[start...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return reason.isEmpty ? "TLS handshake failed" : "TLS handshake failed: \(reason)"
    }
}

/// The collector's certificate did not lead to a pinned certificate or did not name the host, or
/// the URL was not https.
struct UntrustedCollector: Error, CustomStringConvertible {
    let host: String
    let detail: String
    var description: String {
        "the collector at \(host): \(detail)"
    }
}
