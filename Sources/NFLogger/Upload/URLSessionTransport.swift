public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``HTTPTransport`` over an ephemeral `URLSession` (no cookies, no cache, no redirects): the
/// SDK's transport on Apple platforms (see ``DefaultHTTPTransport``).
///
/// On Linux it runs on FoundationNetworking (libcurl), which can spin a core after a collector
/// drops a connection; the SDK uses async-http-client there, and this type is kept for apps
/// and benchmarks that want URLSession anyway.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate: URLSessionTransportDelegate

    /// - Parameter timeout: how long one request may take, connection included, in seconds:
    ///   0.001 … 3,600 (a value outside is taken as the nearer bound).
    public convenience init(timeout: TimeInterval = 30) {
        self.init(timeout: timeout, pinning: nil)
    }

    init(timeout: TimeInterval, pinning: CertificatePinning?) {
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = DefaultHTTPTransport.clamp(timeout)
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        delegate = URLSessionTransportDelegate(pinning: pinning)
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Cancels what is in flight; later requests fail.
    func shutdown() { session.invalidateAndCancel() }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        if delegate.pinning != nil && request.url.scheme?.lowercased() != "https" {
            throw UntrustedCollector(host: request.url.host ?? "", detail: "the URL is \(request.url.scheme ?? "without a scheme"), not https; nothing was sent")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch {
            if let refusal = delegate.refusal(for: request.url.host) { throw refusal }
            throw error
        }
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }
}
