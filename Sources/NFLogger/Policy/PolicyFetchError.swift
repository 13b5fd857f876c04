/// Why no policy came from the collector: nothing changed, and the SDK asks again later (with
/// backoff) on its own. Passing conditions, or the app's configuration; never the policy's
/// content (a refused document is a ``PolicyError``).
///
/// New cases may come in any minor release (see <doc:SourceStability>): a `switch` over it
/// needs a `default`.
public enum PolicyFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The collector answered with this status.
    case http(status: Int)
    /// The request failed before an answer came.
    case network(String)
    /// No ``Configuration/policyURL`` is set.
    case notConfigured
    /// The logger was closed.
    case closed

    public var description: String {
        switch self {
        case .http(let status): "the collector answered \(status)"
        case .network(let detail): "network: \(detail)"
        case .notConfigured: "no policy URL is configured"
        case .closed: "the logger is closed"
        }
    }
}
