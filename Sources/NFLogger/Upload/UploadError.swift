/// Why an upload did not happen or did not succeed. Stored events are kept in every case.
///
/// New cases may come in any minor release (see <doc:SourceStability>): a `switch` over it
/// needs a `default`.
public enum UploadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No ``Configuration/uploadURL`` is set: events stay on the device.
    case notConfigured
    /// The app is suspended (``NFLogger/suspend()``): nothing is sent until ``NFLogger/resume()``.
    case suspended
    /// The logger was closed.
    case closed
    /// Consent is pending (``NFLogger/consent``): events are held on the device until it is granted.
    case consentPending
    /// No response arrived: connection refused or dropped, timeout, TLS failure.
    case network(String)
    /// The collector's TLS certificate is not one of the pinned certificates (or does not name
    /// its host): see ``CertificatePinning``. Nothing was sent; uploads back off and try again.
    case untrustedCollector(String)
    /// The collector answered with a temporary failure (408, 429, 5xx); the batch will be retried.
    case server(status: Int, message: String)
    /// The collector refused the app key or the URL (401, 403, 404, …). Uploads pause for
    /// ``Configuration/Upload/refusedBackoff``; the data stays.
    case refused(status: Int, message: String)
    /// The local database could not be read or updated.
    case storage(StorageError)
    /// The batch could not be compressed.
    case encoding(String)
    /// The policy switched this output off (`outputs.disabled`).
    case outputDisabled

    public var description: String {
        switch self {
        case .notConfigured: "no upload URL is configured"
        case .suspended: "the app is suspended"
        case .closed: "the logger is closed"
        case .consentPending: "consent is pending: events are held on the device"
        case .network(let detail): "network: \(detail)"
        case .untrustedCollector(let detail): "untrusted collector: \(detail)"
        case .server(let status, let message): "the collector answered \(status)\(message.isEmpty ? "" : ": \(message)")"
        case .refused(let status, let message): "the collector refused the upload (\(status))\(message.isEmpty ? "" : ": \(message)")"
        case .storage(let error): "storage: \(error)"
        case .encoding(let detail): "encoding: \(detail)"
        case .outputDisabled: "the policy disabled this output"
        }
    }
}

/// What ``NFLogger/flush(completion:)`` reports.
public struct FlushResult: Sendable, Equatable {
    /// Events the collector confirmed during this flush.
    public let uploadedEvents: Int
    /// Events still on the device waiting for upload (spans still open are not counted).
    public let remainingEvents: Int
    /// Events the collector refused for good during this flush, now set aside in the database.
    public let quarantinedEvents: Int
    /// Why the flush stopped before the queue was empty, if it did: the collector's failure, or
    /// else the first of another durable output's.
    public let error: UploadError?
    /// Each durable output's own result, by output id (the collector's under `collector`), when
    /// ``Configuration/outputs`` adds durable outputs. The figures above are the collector's (or,
    /// without one, the first durable output's). An output the policy switched off is listed with
    /// ``UploadError/outputDisabled`` and what it is owed, and does not fail the flush.
    public var outputs: [String: FlushResult] = [:]
}
