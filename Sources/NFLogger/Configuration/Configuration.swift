public import Dispatch
public import Foundation
public import Logging

/// Everything an ``NFLogger`` needs to start. Build one in code, or load one from a JSON file
/// with ``init(contentsOf:)``.
///
/// ```swift
/// var configuration = Configuration(databaseURL: url, appID: "com.example.app", appVersion: "1.4.2")
/// configuration.mode = .active
/// ```
public struct Configuration: Sendable {
    /// Where the SQLite database lives. Its directory is created if missing.
    public var databaseURL: URL
    /// Identifies the app in every event's standard properties.
    public var appID: String
    /// The app's version, in every event's standard properties.
    public var appVersion: String
    /// The key the collector knows this app by.
    public var appKey: String?
    /// The tenant (organisation) the app belongs to.
    public var tenantID: String?
    /// Where batches of events are uploaded.
    public var uploadURL: URL?
    /// Where the policy is downloaded from.
    public var policyURL: URL?
    /// The mode the logger starts in when no policy is in force. Default: ``LogMode/active``.
    public var mode: LogMode = .active
    /// The consent a new install starts with, until the app sets ``NFLogger/consent`` (which
    /// is then saved and wins at every later start). Default: ``Consent/granted``; an app that
    /// asks the user first starts with ``Consent/pending``.
    public var initialConsent: Consent = .granted
    /// The policy in force until one is fetched (or cached from an earlier run).
    public var defaultPolicy: Policy?
    /// An Ed25519 public key (32 raw bytes). When set, only policies whose signature (the
    /// collector's `X-NFLog-Signature` header) verifies with it are applied.
    public var policyPublicKey: Data?
    /// How often to ask for a newer policy when the policy in force does not say. Default: 1 hour.
    public var policyRefreshInterval: Duration = .seconds(3600)
    /// A stable id for this install, used for deterministic sampling. Default: a random id the
    /// SDK keeps in a file beside the database.
    public var installID: String?
    /// Bounds on input, memory and waiting.
    public var limits = Limits()
    /// How long the app may stay suspended before ``NFLogger/resume()`` starts a new session.
    /// Default: 30 minutes.
    public var sessionIdleTimeout: Duration = .seconds(30 * 60)
    /// Where completion handlers run. Default: a serial queue owned by the logger. Never the
    /// caller's thread.
    public var completionQueue: DispatchQueue?
    /// How and when recorded events are uploaded to ``uploadURL``.
    public var upload = Upload()
    /// When set, event parameters are encrypted (AES-256-GCM) before they are written to the
    /// database and decrypted only to build an upload. A database encrypted with another key (or
    /// encrypted, with no key configured now) is moved aside as `<database>.undecryptable-<time>`,
    /// never deleted, and a fresh one is started; turning encryption on for an existing database
    /// encrypts what it holds. Names, times and session data stay readable. Default: none.
    public var encryptionKey: EncryptionKey?
    /// When set, the collector is trusted only if its certificate leads to one of these
    /// (``CertificatePinning``); ``uploadURL`` and ``policyURL`` must then be `https`. Default:
    /// none (the system's trust store).
    public var pinning: CertificatePinning?
    /// How uploads and policy fetches are sent. Default: a ``DefaultHTTPTransport`` (URLSession on
    /// Apple platforms, async-http-client elsewhere), pinning when ``pinning`` is set. Setting
    /// both is an error: a transport of your own does its own pinning.
    public var transport: (any HTTPTransport)?
    /// The SDK's own diagnostic log. Default: silent.
    public var logger = Logger(label: "nflogger", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Bounds that keep the SDK's cost predictable.
    public struct Limits: Sendable, Equatable {
        /// The largest parameters object accepted, in bytes of JSON. Default: 32 KiB; at most 4 MiB.
        public var maxParametersBytes = 32 * 1024
        static let maxParametersBytesCeiling = 4 * 1024 * 1024
        /// How many calls may wait in memory for the database before new ones complete with
        /// ``NFLoggerError/backpressure(pendingEvents:pendingBytes:)``. Default: 20,000.
        public var maxPendingEvents = 20_000
        /// The same bound in bytes. Default: 16 MiB.
        public var maxPendingBytes = 16 * 1024 * 1024
        /// How long a write waits for another process that holds the database. Default: 5 s.
        public var busyTimeout: Duration = .seconds(5)
        /// The most events kept on the device; beyond it the oldest (lowest priority first) are
        /// dropped, counted, and the counts reported to the collector. Default: 100,000.
        public var maxStoredEvents = 100_000
        /// The most bytes the database and its write-ahead log may use. Default: 64 MiB.
        public var maxDatabaseBytes = 64 * 1024 * 1024
        /// Events older than this are dropped (and counted). Default: 30 days.
        public var maxEventAge: Duration = .seconds(30 * 86_400)
        /// A span still open this long after it started is closed as abandoned. Default: 24 hours.
        public var spanTimeout: Duration = .seconds(86_400)

        public init() {}
    }

    /// Batching, compression and retry of uploads.
    public struct Upload: Sendable, Equatable {
        /// How often stored events are uploaded while the app is in the foreground. Default: 30 s.
        public var interval: Duration = .seconds(30)
        /// Upload as soon as this many events were recorded since the last upload, without
        /// waiting for the interval. Default: 500.
        public var countThreshold = 500
        /// The most events in one batch. Default: 1,000 (about 20 KB gzip-compressed for typical
        /// events). Each batch costs a request and a transaction on both sides, so a backlog
        /// drains faster in larger batches (scripts/bench's end-to-end phase).
        public var batchMaxEvents = 1_000
        /// The most bytes of JSON in one batch, before compression. Default: 512 KiB.
        public var batchMaxBytes = 512 * 1024
        /// How many batches may be in flight at once. Default: 2, so the device prepares the next
        /// batch while the collector stores the last one.
        public var maxConcurrentUploads = 2
        /// zlib's level for the gzip body: 0 (none) … 9 (smallest). Default: 6.
        public var gzipLevel = 6
        /// The first retry waits up to this long; each further failure doubles it (full jitter).
        /// A batch that failed on its own waits by its own failures while the others go on;
        /// after `2 × maxConcurrentUploads + 1` failures in a row every batch waits, by the
        /// count in a row. Default: 1 s.
        public var initialBackoff: Duration = .seconds(1)
        /// The longest wait between retries, `Retry-After` aside. Default: 5 minutes.
        public var maxBackoff: Duration = .seconds(300)
        /// After the collector refused the app key (401/403) or the URL (404 and the like),
        /// uploads pause this long; nothing is deleted. Default: 1 hour.
        public var refusedBackoff: Duration = .seconds(3600)
        /// How long one request may take. Default: 30 s.
        public var requestTimeout: Duration = .seconds(30)

        public init() {}
    }

    /// A configuration with defaults for everything but where to store events and which app
    /// they come from.
    public init(databaseURL: URL, appID: String, appVersion: String) {
        self.databaseURL = databaseURL
        self.appID = appID
        self.appVersion = appVersion
    }

    /// The transport uploads and policy fetches share: the app's own, or the SDK's.
    func makeTransport() -> any HTTPTransport {
        transport ?? DefaultHTTPTransport(timeout: upload.requestTimeout, pinning: pinning)
    }

    /// Checks the values that code could have set out of range.
    func validate() throws(ConfigurationError) {
        guard databaseURL.isFileURL, !databaseURL.path.isEmpty else {
            throw .invalidField("database_path", reason: "must be a file path, got \(databaseURL)")
        }
        // The wire protocol's limits (docs/PROTOCOL.md): a collector would refuse every batch otherwise.
        if appID.isEmpty || appID.utf8.count > 256 { throw .invalidField("app_id", reason: "must be 1…256 bytes") }
        if appVersion.isEmpty || appVersion.utf8.count > 64 { throw .invalidField("app_version", reason: "must be 1…64 bytes") }
        if let appKey, appKey.isEmpty { throw .invalidField("app_key", reason: "must not be empty") }
        if let uploadURL {
            try Self.checkHTTP(uploadURL, field: "upload_url")
            if appKey == nil { throw .missingField("app_key") }
        }
        if let policyURL {
            try Self.checkHTTP(policyURL, field: "policy_url")
            if appKey == nil { throw .missingField("app_key") }
        }
        if pinning != nil {
            if transport != nil {
                throw .invalidField("pinning", reason: "cannot be combined with a transport of your own: pin in that transport")
            }
            for (url, field) in [(uploadURL, "upload_url"), (policyURL, "policy_url")] {
                if let url, url.scheme?.lowercased() != "https" {
                    throw .invalidField(field, reason: "must be https when certificates are pinned, got \(url)")
                }
            }
        }
        if let policyPublicKey, policyPublicKey.count != 32 {
            throw .invalidField("policy_public_key", reason: "must be a 32-byte Ed25519 public key, got \(policyPublicKey.count) bytes")
        }
        if policyRefreshInterval < .seconds(1) { throw .invalidField("policy_refresh_interval_s", reason: "must be at least 1 second") }
        if let installID, installID.isEmpty || installID.count > 128 { throw .invalidField("install_id", reason: "must be 1…128 characters") }
        if limits.maxParametersBytes < 2 || limits.maxParametersBytes > Limits.maxParametersBytesCeiling {
            throw .invalidField("limits.max_parameters_bytes", reason: "must be between 2 and \(Limits.maxParametersBytesCeiling)")
        }
        if limits.maxPendingEvents < 1 { throw .invalidField("limits.max_pending_events", reason: "must be at least 1") }
        if limits.maxPendingBytes < 2 * limits.maxParametersBytes + 1024 {
            // Otherwise an event with maximal parameters could never be queued.
            throw .invalidField("limits.max_pending_bytes", reason: "must be at least twice limits.max_parameters_bytes plus 1024")
        }
        if limits.busyTimeout < .zero { throw .invalidField("limits.busy_timeout_ms", reason: "must not be negative") }
        if limits.maxStoredEvents < 100 { throw .invalidField("limits.max_stored_events", reason: "must be at least 100") }
        if limits.maxDatabaseBytes < 256 * 1024 { throw .invalidField("limits.max_database_bytes", reason: "must be at least 262144") }
        if limits.maxEventAge < .seconds(60) { throw .invalidField("limits.max_event_age_s", reason: "must be at least 60 seconds") }
        if limits.spanTimeout < .seconds(1) { throw .invalidField("limits.span_timeout_s", reason: "must be at least 1 second") }
        try upload.validate()
        if sessionIdleTimeout < .zero || sessionIdleTimeout > .seconds(Configuration.maxIdleTimeoutSeconds) {
            throw .invalidField("session_idle_timeout_s", reason: "must be between 0 and \(Int(Configuration.maxIdleTimeoutSeconds)) seconds")
        }
    }

    static func checkHTTP(_ url: URL, field: String) throws(ConfigurationError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw .invalidField(field, reason: "must be an http or https URL with a host, got \"\(url.absoluteString)\"")
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, saturating at the bounds of `Int64` instead of wrapping.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflow2 ? (seconds < 0 ? .min : .max) : sum
    }

    /// Whole nanoseconds, 0 for negative durations, saturating at `UInt64.max`.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflow2 ? .max : sum
    }
}

extension Configuration.Upload {
    func validate() throws(ConfigurationError) {
        func check(_ ok: Bool, _ field: String, _ reason: String) throws(ConfigurationError) {
            if !ok { throw .invalidField("upload." + field, reason: reason) }
        }
        try check(interval >= .milliseconds(10), "interval_s", "must be at least 0.01 seconds")
        try check(countThreshold >= 1, "count_threshold", "must be at least 1")
        try check((1...10_000).contains(batchMaxEvents), "batch_max_events", "must be between 1 and 10000")
        try check((1024...(8 << 20)).contains(batchMaxBytes), "batch_max_bytes", "must be between 1024 and 8388608")
        try check((0...9).contains(gzipLevel), "gzip_level", "must be between 0 and 9")
        try check((1...4).contains(maxConcurrentUploads), "max_concurrent_uploads", "must be between 1 and 4")
        try check(initialBackoff > .zero && initialBackoff <= maxBackoff, "initial_backoff_s", "must be positive and at most max_backoff_s")
        try check(maxBackoff <= .seconds(86_400), "max_backoff_s", "must be at most a day")
        try check(refusedBackoff > .zero && refusedBackoff <= .seconds(7 * 86_400), "refused_backoff_s", "must be positive and at most a week")
        try check(requestTimeout > .zero && requestTimeout <= .seconds(3_600), "request_timeout_s", "must be positive and at most an hour")
    }
}
