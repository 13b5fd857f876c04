// async-http-client is linked on Linux only (Package.swift), so this one condition switches the
// whole file: an app built for Apple platforms carries no SwiftNIO and no second TLS stack. (No
// other target depends on AsyncHTTPClient, so `canImport` cannot see a sibling's module.)
#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The SDK's transport on Linux: async-http-client (SwiftNIO) with a keep-alive connection pool,
/// connect and whole-request timeouts, no redirects and HTTP/1.1.
///
/// FoundationNetworking's URLSession (libcurl underneath) can keep a dispatch source firing in
/// a loop after the peer closes a socket, burning a core while uploads stall; SwiftNIO closes the
/// channel and the request fails, so the Uploader's backoff takes over with the process idle.
final class HTTPClientTransport: Sendable {
    private let client: HTTPClient
    /// What the client trusts (read by a test: pinned certificates replace the system's).
    let tls: TLSConfiguration
    /// Seconds.
    private let timeout: TimeInterval
    private let pinned: Bool
    /// Responses the SDK reads are small (a policy, an upload's answer); anything larger is refused.
    static let maxResponseBytes = 1024 * 1024

    init(timeout: TimeInterval, pinning: CertificatePinning?) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let pinning {
            tls.trustRoots = .certificates(pinning.derCertificates.compactMap(CertificatePinning.platformCertificate))
            tls.certificateVerification = .fullVerification
        }
        self.tls = tls
        pinned = pinning != nil
        // An hour at most (Configuration validates that); clamped here too, so no input traps.
        self.timeout = DefaultHTTPTransport.clamp(timeout)
        let amount = TimeAmount.nanoseconds(Int64(clamping: self.timeout.nanoseconds))
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: min(amount, .seconds(10)), read: amount, write: amount))
        configuration.httpVersion = .http1Only
        // Fail a request with the first connection error (a refused certificate above all): the
        // Uploader has its own backoff, and must see the failure rather than wait out a timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        // A pooled connection is dropped after 20 s idle, before the collector closes one idle for
        // 30 s (its request head timeout): reusing an older one raced that close, and the request
        // failed with the connection closed under it (seen on a loaded machine).
        configuration.connectionPool.idleTimeout = .seconds(20)
        // The SDK's own requests are not traced: async-http-client traces every request with the
        // tracer an app bootstraps, and with NFLoggerTracer each upload would be a span that is
        // itself uploaded (a loop), its traceparent sent to the collector.
        configuration.tracing.tracer = nil
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    // The client must be shut down before it is released; the shutdown keeps it alive until done.
    // A second shutdown (after ``shutdown()``) only reports that it already was.
    deinit { client.shutdown { _ in } }

    /// Closes the connections; later requests fail.
    func shutdown() { client.shutdown { _ in } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        // Pinning means nothing over plain HTTP, and the app key would travel in clear.
        if pinned && request.url.scheme?.lowercased() != "https" {
            throw UntrustedCollector(host: request.url.host ?? "", detail: "the URL is \(request.url.scheme ?? "without a scheme"), not https; nothing was sent")
        }
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        do {
            // The deadline covers the whole exchange: async-http-client's own deadline ends with
            // the response head, so a body trickling a byte a second would otherwise never time out.
            return try await Self.within(timeout) { [client, outgoing] in
                let response = try await client.execute(outgoing, timeout: .nanoseconds(Int64(clamping: self.timeout.nanoseconds)))
                let body = try await response.body.collect(upTo: Self.maxResponseBytes)
                var headers: [String: String] = [:]
                for header in response.headers { headers[header.name] = header.value }
                return TransportResponse(status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
            }
        } catch let error as NIOSSLError where pinned {
            guard case .handshakeFailed = error else { throw error }
            throw UntrustedCollector(host: request.url.host ?? "", detail: "its certificate is not one of the pinned certificates (\(Self.reason(error)))")
        } catch let error as NIOSSLExtraError where pinned && error == .failedToValidateHostname {
            throw UntrustedCollector(host: request.url.host ?? "", detail: "its certificate does not name this host")
        }
    }

    /// Runs `operation`, cancelling it (which closes its connection) if it takes longer than
    /// `limit` seconds.
    private static func within<T: Sendable>(_ limit: TimeInterval, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(nanoseconds: limit.nanoseconds)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw RequestTimedOut(limit: limit)
            }
            return value
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

/// No complete answer arrived within the request timeout.
struct RequestTimedOut: Error, CustomStringConvertible {
    /// Seconds.
    let limit: TimeInterval
    var description: String { "no complete response within \(limit) seconds" }
}

extension CertificatePinning {
    /// A DER certificate as BoringSSL reads it, or `nil` if it is not one.
    static func platformCertificate(_ der: [UInt8]) -> NIOSSLCertificate? {
        try? NIOSSLCertificate(bytes: der, format: .der)
    }
}
#endif
