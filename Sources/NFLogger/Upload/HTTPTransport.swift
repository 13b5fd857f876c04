public import Foundation

/// How the SDK sends HTTP requests. ``DefaultHTTPTransport`` is the default; supply your own in
/// ``Configuration/Network/transport`` to route uploads through your app's networking stack, or to
/// inject faults in tests.
public protocol HTTPTransport: Sendable {
    /// Sends one request and returns the response, or throws if no response arrived
    /// (connection refused or dropped, timeout, TLS failure).
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// An HTTP request, as the SDK builds it.
public struct TransportRequest: Sendable {
    public var url: URL
    public var method: String
    /// Header names as written; compare them case-insensitively.
    public var headers: [String: String]
    public var body: Data

    public init(url: URL, method: String, headers: [String: String], body: Data) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }
}

/// An HTTP response.
public struct TransportResponse: Sendable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// A header's value, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
