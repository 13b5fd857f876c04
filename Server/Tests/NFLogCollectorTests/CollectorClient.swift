import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger

/// Requests to a test collector over real HTTP, with a chosen app key and read token.
struct CollectorClient {
    let url: URL
    var key: String? = TestCollector.appKey
    /// Sent as `Authorization: Bearer …` when set.
    var readToken: String?
    let transport = DefaultHTTPTransport(timeout: hangLimitSeconds)

    init(_ collector: some CollectorUnderTest, key: String? = TestCollector.appKey, readToken: String? = nil) {
        self.url = collector.url
        self.key = key
        self.readToken = readToken
    }

    /// A client that reads with `token` and carries no app key.
    static func reader(_ collector: some CollectorUnderTest, token: String = TestCollector.readToken) -> CollectorClient {
        CollectorClient(collector, key: nil, readToken: token)
    }

    /// `POST /v1/events`.
    func post(_ body: [UInt8], encoding: String? = "gzip") async throws -> TransportResponse {
        var headers = ["Content-Type": "application/json"]
        if let encoding { headers["Content-Encoding"] = encoding }
        return try await send("POST", "v1/events", body: body, headers: headers)
    }

    /// `path` may end in a query (`v1/report?from=1`), sent as written.
    func send(_ method: String, _ path: String, body: [UInt8] = [], headers: [String: String] = [:]) async throws -> TransportResponse {
        var headers = headers
        if let key { headers[WireProtocol.appKeyHeader] = key }
        if let readToken { headers["Authorization"] = "Bearer \(readToken)" }
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        var target = url.appendingPathComponent(parts.first ?? path)
        if parts.count == 2, let withQuery = URL(string: target.absoluteString + "?" + parts[1]) { target = withQuery }
        return try await transport.send(TransportRequest(url: target, method: method, headers: headers, body: Data(body)))
    }

    /// The parsed JSON body of a 200.
    func json(_ method: String, _ path: String, body: [UInt8] = []) async throws -> [String: Any] {
        let response = try await send(method, path, body: body)
        guard response.status == 200, let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw RawHTTP.Failure(description: "\(method) \(path): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return object
    }

    static func gzip(_ text: String) throws -> [UInt8] { try Gzip.compress(Array(text.utf8), level: 6) }

    /// `error.message` of an error body, or `<no message>`.
    static func message(_ body: Data) -> String {
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        return (object?["error"] as? [String: Any])?["message"] as? String ?? "<no message>"
    }
}
