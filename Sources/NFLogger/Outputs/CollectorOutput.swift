public import Foundation

/// A second collector: events matching ``pattern`` are uploaded to ``url`` with ``appKey`` as
/// well, exactly as to the collector at ``Configuration/uploadURL`` (the same protocol, batching,
/// gzip, backoff, `Retry-After`, split and quarantine, through the same transport and pinning),
/// each output with its own queue of batches.
///
/// Durable: what it matched stays on the device until it confirms it, and a collector keeps each
/// event once, so it receives every event exactly once.
public struct CollectorOutput: Output {
    public let id: String
    public let pattern: String
    /// Where batches are posted (the collector's `POST /v1/events`).
    public let url: URL
    /// The app's key at that collector.
    public let appKey: String

    public init(id: String, url: URL, appKey: String, pattern: String = "**") {
        self.id = id
        self.url = url
        self.appKey = appKey
        self.pattern = pattern
    }

    func validate(field: String) throws(ConfigurationError) {
        try Configuration.checkHTTP(url, field: field + ".url")
        if appKey.isEmpty { throw .invalidField(field + ".app_key", reason: "must not be empty") }
    }
}
