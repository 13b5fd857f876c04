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
    /// Where the policy comes from and what applies until it does: rarely changed.
    public var policyOptions = PolicyOptions()
    /// Bounds on input, memory and waiting.
    public var limits = Limits()
    /// How long the app may stay suspended before ``NFLogger/resume()`` starts a new session, in
    /// seconds: 0 … 604,800 (a week). Default: 1,800 (30 minutes).
    public var sessionIdleTimeout: TimeInterval = 30 * 60
    /// Where completion handlers run. Default: a serial queue owned by the logger. Never the
    /// caller's thread. Handlers run one after another, in the order their statuses were
    /// decided, even on a concurrent queue (a burst of them shares one block): a handler that
    /// blocks holds up the ones behind it.
    public var completionQueue: DispatchQueue?
    /// How and when recorded events are uploaded to ``uploadURL``.
    public var upload = Upload()
    /// When set, event parameters are encrypted (AES-256-GCM) before they are written to the
    /// database and decrypted only to build an upload. A database encrypted with another key (or
    /// encrypted, with no key configured now) is moved aside as `<database>.undecryptable-<time>`,
    /// never deleted, and a fresh one is started; turning encryption on for an existing database
    /// encrypts what it holds. Names, times and session data stay readable. The database only:
    /// ``outputs`` receive events in plain text. Default: none.
    public var encryptionKey: EncryptionKey?
    /// Which transport carries uploads and policy fetches, and which certificates it trusts.
    public var network = Network()
    /// Which hosts get a transaction's `traceparent` (none by default).
    public var propagation = Propagation()
    /// Which web pages may log through a ``ScriptBridge`` (none by default).
    public var webBridge = WebBridge()
    /// Where recorded events go besides the collector at ``uploadURL``: more durable outputs (a
    /// second collector, a file) and best-effort ones (swift-log), each routed by its pattern.
    /// See <doc:FiltersAndOutputs>. Default: none.
    public var outputs: [any Output] = []
    /// The events the collector at ``uploadURL`` takes (its output id is `collector`), as a tag
    /// pattern. Default: `**`, every event.
    public var collectorPattern = "**"
    /// What changes, replaces or drops events before they are stored (common parameters,
    /// redaction), applied in this order on the logger's queue. Each filter's name must be 1–64
    /// bytes and unique, and its pattern valid. See ``EventFilter`` and <doc:FiltersAndOutputs>.
    /// Default: none.
    public var filters: [any EventFilter] = []
    /// The SDK's own diagnostic log. Default: silent.
    public var logger = Logger(label: "nflogger", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Where the policy comes from and what applies until it does. Every duration is in seconds.
    public struct PolicyOptions: Sendable, Equatable {
        /// The policy in force while none has been fetched (or cached from an earlier run).
        /// Default: none (``Configuration/mode`` applies).
        public var fallback: Policy?
        /// An Ed25519 public key (32 raw bytes). When set, only policies whose signature (the
        /// collector's `X-NFLog-Signature` header) verifies with it are applied. Default: none.
        public var publicKey: Data?
        /// How often to ask for a newer policy when the policy in force does not say, in seconds:
        /// at least 1. Default: 3,600 (an hour).
        public var refreshInterval: TimeInterval = 3_600
        /// A stable id for this install, which the policy's deterministic sampling hashes: 1…128
        /// characters. Default: a random id the SDK keeps in a file beside the database.
        public var installID: String?

        public init() {}
    }

    /// The transport for uploads and policy fetches, and which certificates it trusts.
    public struct Network: Sendable {
        /// When set, the collector is trusted only if its certificate leads to one of these
        /// (``CertificatePinning``); ``Configuration/uploadURL`` and ``Configuration/policyURL``
        /// must then be `https`. Default: none (the system's trust store).
        public var pinning: CertificatePinning?
        /// How uploads and policy fetches are sent. Default: a ``DefaultHTTPTransport`` (URLSession
        /// on Apple platforms, async-http-client elsewhere), pinning when ``pinning`` is set, with
        /// ``Configuration/Upload/requestTimeout``. Setting both is an error: a transport of your
        /// own does its own pinning.
        public var transport: (any HTTPTransport)?

        public init() {}
    }

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
        /// How long a write waits for another process that holds the database, in seconds: 0 or
        /// more (0: not at all). Default: 5.
        public var busyTimeout: TimeInterval = 5
        /// The most events kept on the device; beyond it the oldest (lowest priority first) are
        /// dropped, counted, and the counts reported to the collector. Default: 100,000.
        public var maxStoredEvents = 100_000
        /// The most bytes the database and its write-ahead log may use. Default: 64 MiB.
        public var maxDatabaseBytes = 64 * 1024 * 1024
        /// Events older than this are dropped (and counted), in seconds: at least 60. Default:
        /// 2,592,000 (30 days).
        public var maxEventAge: TimeInterval = 30 * 86_400
        /// A span still open this long after it started is closed as abandoned, in seconds: at
        /// least 1. Default: 86,400 (24 hours).
        public var spanTimeout: TimeInterval = 86_400

        public init() {}
    }

    /// Batching, compression and retry of uploads. Every duration is in seconds.
    public struct Upload: Sendable, Equatable {
        /// How long a recorded event may wait before it is uploaded while the app is in the
        /// foreground, in seconds: at least 0.01. Default: 30. The timer runs only while there
        /// is something to send: an idle logger wakes for nothing.
        public var interval: TimeInterval = 30
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
        /// The first retry waits up to this long, in seconds; each further failure doubles it
        /// (full jitter). A batch that failed on its own waits by its own failures while the
        /// others go on; after `2 × maxConcurrentUploads + 1` failures in a row every batch
        /// waits, by the count in a row. More than 0, at most ``maxBackoff``. Default: 1.
        public var initialBackoff: TimeInterval = 1
        /// The longest wait between retries, `Retry-After` aside, in seconds: at most 86,400 (a
        /// day). Default: 300 (5 minutes).
        public var maxBackoff: TimeInterval = 300
        /// After the collector refused the app key (401/403) or the URL (404 and the like),
        /// uploads pause this long, in seconds; nothing is deleted. More than 0, at most 604,800
        /// (a week). Default: 3,600 (an hour).
        public var refusedBackoff: TimeInterval = 3_600
        /// How long one request (an upload or a policy fetch) may take with the SDK's own
        /// transport, in seconds: more than 0, at most 3,600. Default: 30.
        public var requestTimeout: TimeInterval = 30

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
        network.transport ?? DefaultHTTPTransport(timeout: upload.requestTimeout, pinning: network.pinning)
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
        if network.pinning != nil {
            if network.transport != nil {
                throw .invalidField("pinning", reason: "cannot be combined with a transport of your own: pin in that transport")
            }
            for (url, field) in [(uploadURL, "upload_url"), (policyURL, "policy_url")] {
                if let url, url.scheme?.lowercased() != "https" {
                    throw .invalidField(field, reason: "must be https when certificates are pinned, got \(url)")
                }
            }
        }
        try validateOutputs()
        try validateFilters()
        if let publicKey = policyOptions.publicKey, publicKey.count != 32 {
            throw .invalidField("policy_public_key", reason: "must be a 32-byte Ed25519 public key, got \(publicKey.count) bytes")
        }
        if !Self.isSeconds(policyOptions.refreshInterval, atLeast: 1) {
            throw .invalidField("policy_refresh_interval_s", reason: "must be at least 1 second")
        }
        if let installID = policyOptions.installID, installID.isEmpty || installID.count > 128 {
            throw .invalidField("install_id", reason: "must be 1…128 characters")
        }
        if limits.maxParametersBytes < 2 || limits.maxParametersBytes > Limits.maxParametersBytesCeiling {
            throw .invalidField("limits.max_parameters_bytes", reason: "must be between 2 and \(Limits.maxParametersBytesCeiling)")
        }
        if limits.maxPendingEvents < 1 { throw .invalidField("limits.max_pending_events", reason: "must be at least 1") }
        if limits.maxPendingBytes < 2 * limits.maxParametersBytes + 1024 {
            // Otherwise an event with maximal parameters could never be queued.
            throw .invalidField("limits.max_pending_bytes", reason: "must be at least twice limits.max_parameters_bytes plus 1024")
        }
        if !Self.isSeconds(limits.busyTimeout, atLeast: 0) { throw .invalidField("limits.busy_timeout_ms", reason: "must not be negative") }
        if limits.maxStoredEvents < 100 { throw .invalidField("limits.max_stored_events", reason: "must be at least 100") }
        if limits.maxDatabaseBytes < 256 * 1024 { throw .invalidField("limits.max_database_bytes", reason: "must be at least 262144") }
        if !Self.isSeconds(limits.maxEventAge, atLeast: 60) { throw .invalidField("limits.max_event_age_s", reason: "must be at least 60 seconds") }
        if !Self.isSeconds(limits.spanTimeout, atLeast: 1) { throw .invalidField("limits.span_timeout_s", reason: "must be at least 1 second") }
        try upload.validate()
        if !(0...Configuration.maxIdleTimeoutSeconds).contains(sessionIdleTimeout) {
            throw .invalidField("session_idle_timeout_s", reason: "must be between 0 and \(Int(Configuration.maxIdleTimeoutSeconds)) seconds")
        }
    }

    /// Whether `seconds` is a finite number of seconds, at least `minimum`: NaN and infinity are not.
    static func isSeconds(_ seconds: TimeInterval, atLeast minimum: TimeInterval) -> Bool {
        (minimum...TimeInterval.greatestFiniteMagnitude).contains(seconds)
    }

    static func checkHTTP(_ url: URL, field: String) throws(ConfigurationError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw .invalidField(field, reason: "must be an http or https URL with a host, got \"\(url.absoluteString)\"")
        }
    }
}

extension Configuration.Upload {
    func validate() throws(ConfigurationError) {
        func check(_ ok: Bool, _ field: String, _ reason: String) throws(ConfigurationError) {
            if !ok { throw .invalidField("upload." + field, reason: reason) }
        }
        try check(Configuration.isSeconds(interval, atLeast: 0.01), "interval_s", "must be at least 0.01 seconds")
        try check(countThreshold >= 1, "count_threshold", "must be at least 1")
        try check((1...10_000).contains(batchMaxEvents), "batch_max_events", "must be between 1 and 10000")
        try check((1024...(8 << 20)).contains(batchMaxBytes), "batch_max_bytes", "must be between 1024 and 8388608")
        try check((0...9).contains(gzipLevel), "gzip_level", "must be between 0 and 9")
        try check((1...4).contains(maxConcurrentUploads), "max_concurrent_uploads", "must be between 1 and 4")
        // Written so that NaN fails every check.
        try check(initialBackoff > 0 && initialBackoff <= maxBackoff, "initial_backoff_s", "must be positive and at most max_backoff_s")
        try check(maxBackoff <= 86_400, "max_backoff_s", "must be at most a day")
        try check(refusedBackoff > 0 && refusedBackoff <= 7 * 86_400, "refused_backoff_s", "must be positive and at most a week")
        try check(requestTimeout > 0 && requestTimeout <= 3_600, "request_timeout_s", "must be positive and at most an hour")
    }
}
