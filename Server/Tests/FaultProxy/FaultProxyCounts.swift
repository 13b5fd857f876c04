/// What a ``FaultProxy`` did so far.
public struct FaultProxyCounts: Sendable, Codable, Equatable, CustomStringConvertible {
    /// Client connections accepted.
    public var connections = 0
    /// Request heads read from clients.
    public var requests = 0
    /// Requests sent on to the upstream.
    public var forwarded = 0
    /// Upstream answers relayed to the client in full.
    public var answered = 0
    /// Faults injected, by ``FaultKind`` raw value.
    public var faults: [String: Int] = [:]
    /// Requests that arrived while a `Retry-After` the proxy gave was still running (less the
    /// grace at either end): a client ignoring it.
    public var earlyRequests = 0
    /// Requests the upstream could not answer (answered 502).
    public var upstreamFailures = 0

    public init() {}

    public var description: String {
        let kinds = faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(connections) connections, \(requests) requests, \(forwarded) forwarded, \(answered) answered, faults [\(kinds)], \(earlyRequests) early, \(upstreamFailures) upstream failures"
    }
}
