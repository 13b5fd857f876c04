public import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

extension Configuration {
    /// A week: longer idle timeouts are almost certainly a unit mistake.
    static let maxIdleTimeoutSeconds = 7.0 * 24 * 3600

    /// Loads a configuration from a JSON file, the drop-in file an operator hands to app
    /// developers:
    ///
    /// ```json
    /// {
    ///   "app_key": "k-123", "tenant_id": "acme",
    ///   "upload_url": "https://collector.example.com/v1/events",
    ///   "policy_url": "https://collector.example.com/v1/policy",
    ///   "database_path": "nflogger/events.sqlite",
    ///   "app_id": "com.example.app", "app_version": "1.4.2",
    ///   "mode": "specific", "specific_patterns": ["ui.**", "net.*"],
    ///   "limits": { "max_parameters_bytes": 32768, "max_pending_events": 20000 },
    ///   "upload": { "interval_s": 30, "batch_max_events": 500, "gzip_level": 6 }
    /// }
    /// ```
    ///
    /// `collector_pattern` and `outputs` route events (see <doc:FiltersAndOutputs>): each output
    /// is an object with a `type` (`collector`, `jsonl`, `swift_log`), as in docs/SDK.md.
    ///
    /// `app_key`, `tenant_id`, `upload_url`, `policy_url` and `database_path` are required; a
    /// relative `database_path` (or `encryption_key_file`, see ``EncryptionKey/init(contentsOf:)``,
    /// or an entry of `pinned_certificate_files`, see ``CertificatePinning``) is resolved against
    /// the file's directory. `app_id` defaults to the
    /// process name and `app_version` to `"0"`. Unknown fields are rejected, so a typo is an
    /// error rather than a silently ignored setting.
    ///
    /// - Throws: ``ConfigurationError`` naming the file or the field.
    public init(contentsOf fileURL: URL) throws(ConfigurationError) {
        let path = fileURL.path
        guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path: path) }
        let data: Data
        do { data = try Data(contentsOf: fileURL) } catch {
            throw .unreadableFile(path: path, reason: error.localizedDescription)
        }
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ConfigurationError.invalidJSON(path: path, reason: "the top level must be an object")
            }
            object = parsed
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw .invalidJSON(path: path, reason: (error as NSError).localizedDescription)
        }
        try self.init(fields: FieldReader(object, failure: ConfigurationError.init), baseDirectory: fileURL.deletingLastPathComponent())
    }

    private init(fields: FieldReader<ConfigurationError>, baseDirectory: URL) throws(ConfigurationError) {
        try fields.rejectUnknown(["app_key", "tenant_id", "upload_url", "policy_url", "database_path",
                                  "app_id", "app_version", "mode", "specific_patterns", "limits",
                                  "session_idle_timeout_s", "upload", "policy_public_key", "policy_refresh_interval_s",
                                  "install_id", "encryption_key_file", "pinned_certificate_files", "collector_pattern", "outputs"])
        func resolve(_ path: String) -> URL {
            path.hasPrefix("/") ? URL(fileURLWithPath: path) : baseDirectory.appendingPathComponent(path)
        }
        let databaseURL = resolve(try fields.requiredString("database_path"))
        self.init(databaseURL: databaseURL,
                  appID: try fields.string("app_id") ?? ProcessInfo.processInfo.processName,
                  appVersion: try fields.string("app_version") ?? "0")
        appKey = try fields.requiredString("app_key")
        tenantID = try fields.requiredString("tenant_id")
        uploadURL = try fields.requiredURL("upload_url")
        policyURL = try fields.requiredURL("policy_url")

        let patterns = try fields.stringArray("specific_patterns")
        let modeName = try fields.string("mode")
        if patterns != nil && modeName != "specific" {
            throw .invalidField("specific_patterns", reason: "is only used with \"mode\": \"specific\"")
        }
        switch modeName {
        case nil, "active": mode = .active
        case "disabled": mode = .disabled
        case "specific":
            guard let patterns else { throw .missingField("specific_patterns") }
            guard !patterns.isEmpty else {
                throw .invalidField("specific_patterns", reason: "must list at least one pattern (an empty list would record nothing)")
            }
            do { mode = .specific(try EventRules(allow: patterns)) } catch {
                throw .invalidField("specific_patterns", reason: "has \(error)")
            }
        case let other?:
            throw .invalidField("mode", reason: "must be \"disabled\", \"active\" or \"specific\", got \"\(other)\"")
        }
        if let seconds = try fields.number("session_idle_timeout_s") {
            guard (0...Self.maxIdleTimeoutSeconds).contains(seconds) else {
                throw .invalidField("session_idle_timeout_s", reason: "must be between 0 and \(Int(Self.maxIdleTimeoutSeconds)) seconds")
            }
            sessionIdleTimeout = seconds
        }
        if let limits = try fields.object("limits") {
            try limits.rejectUnknown(["max_parameters_bytes", "max_pending_events", "max_pending_bytes", "busy_timeout_ms",
                                      "max_stored_events", "max_database_bytes", "max_event_age_s", "span_timeout_s"])
            if let value = try limits.integer("max_parameters_bytes") { self.limits.maxParametersBytes = value }
            if let value = try limits.integer("max_pending_events") { self.limits.maxPendingEvents = value }
            if let value = try limits.integer("max_pending_bytes") { self.limits.maxPendingBytes = value }
            if let value = try limits.integer("busy_timeout_ms") { self.limits.busyTimeout = Double(value) / 1_000 }
            if let value = try limits.integer("max_stored_events") { self.limits.maxStoredEvents = value }
            if let value = try limits.integer("max_database_bytes") { self.limits.maxDatabaseBytes = value }
            if let value = try limits.number("max_event_age_s") {
                guard value.isFinite, value >= 0, value <= 3.2e7 else { throw .invalidField("limits.max_event_age_s", reason: "must be between 60 and 32000000 seconds") }
                self.limits.maxEventAge = value
            }
            if let value = try limits.seconds("span_timeout_s", atMost: Self.maxIdleTimeoutSeconds) { self.limits.spanTimeout = value }
        }
        if let key = try fields.string("policy_public_key") {
            guard let raw = Data(base64Encoded: key), raw.count == 32 else {
                throw .invalidField("policy_public_key", reason: "must be the base64 of a 32-byte Ed25519 public key (as `nflog-collector keygen` prints it)")
            }
            policyOptions.publicKey = raw
        }
        if let interval = try fields.seconds("policy_refresh_interval_s", atMost: Self.maxIdleTimeoutSeconds) { policyOptions.refreshInterval = interval }
        if let keyPath = try fields.string("encryption_key_file") {
            encryptionKey = try EncryptionKey(contentsOf: resolve(keyPath))
        }
        if let certificatePaths = try fields.stringArray("pinned_certificate_files") {
            network.pinning = try CertificatePinning(contentsOf: certificatePaths.map(resolve))
        }
        policyOptions.installID = try fields.string("install_id")
        if let upload = try fields.object("upload") {
            try upload.rejectUnknown(["interval_s", "count_threshold", "batch_max_events", "batch_max_bytes", "gzip_level",
                                      "max_concurrent_uploads", "initial_backoff_s", "max_backoff_s", "refused_backoff_s",
                                      "request_timeout_s"])
            if let value = try upload.seconds("interval_s", atMost: Self.maxIdleTimeoutSeconds) { self.upload.interval = value }
            if let value = try upload.integer("count_threshold") { self.upload.countThreshold = value }
            if let value = try upload.integer("batch_max_events") { self.upload.batchMaxEvents = value }
            if let value = try upload.integer("batch_max_bytes") { self.upload.batchMaxBytes = value }
            if let value = try upload.integer("gzip_level") { self.upload.gzipLevel = value }
            if let value = try upload.integer("max_concurrent_uploads") { self.upload.maxConcurrentUploads = value }
            if let value = try upload.seconds("initial_backoff_s", atMost: Self.maxIdleTimeoutSeconds) { self.upload.initialBackoff = value }
            if let value = try upload.seconds("max_backoff_s", atMost: Self.maxIdleTimeoutSeconds) { self.upload.maxBackoff = value }
            if let value = try upload.seconds("refused_backoff_s", atMost: Self.maxIdleTimeoutSeconds) { self.upload.refusedBackoff = value }
            if let value = try upload.seconds("request_timeout_s", atMost: Self.maxIdleTimeoutSeconds) { self.upload.requestTimeout = value }
        }
        if let pattern = try fields.string("collector_pattern") { collectorPattern = pattern }
        for entry in try fields.objects("outputs") ?? [] {
            outputs.append(try Self.output(entry, resolve: resolve))
        }
        try validate()
    }

    /// One entry of `outputs`: `{"type": "collector", "id", "url", "app_key", "pattern"?}`,
    /// `{"type": "jsonl", "id"?, "directory", "pattern"?, "max_file_bytes"?, "max_files"?}` (a
    /// relative directory is resolved against the file's) or `{"type": "swift_log", "id"?,
    /// "label", "pattern"?}`. Validated with the rest of the configuration.
    private static func output(_ entry: FieldReader<ConfigurationError>, resolve: (String) -> URL) throws(ConfigurationError) -> any Output {
        let type = try entry.requiredString("type")
        let pattern = try entry.string("pattern") ?? "**"
        switch type {
        case "collector":
            try entry.rejectUnknown(["type", "id", "url", "app_key", "pattern"])
            return CollectorOutput(id: try entry.requiredString("id"), url: try entry.requiredURL("url"),
                                   appKey: try entry.requiredString("app_key"), pattern: pattern)
        case "jsonl":
            try entry.rejectUnknown(["type", "id", "directory", "pattern", "max_file_bytes", "max_files"])
            return JSONLinesOutput(id: try entry.string("id") ?? "file", directory: resolve(try entry.requiredString("directory")),
                                   pattern: pattern, maxFileBytes: try entry.integer("max_file_bytes") ?? 8 << 20,
                                   maxFiles: try entry.integer("max_files") ?? 16)
        case "swift_log":
            try entry.rejectUnknown(["type", "id", "label", "pattern"])
            return SwiftLogOutput(id: try entry.string("id") ?? "swift-log", logger: Logger(label: try entry.requiredString("label")),
                                  pattern: pattern)
        default:
            throw .invalidField(entry.path("type"), reason: "must be \"collector\", \"jsonl\" or \"swift_log\", got \"\(type)\"")
        }
    }
}

extension ConfigurationError {
    /// What the shared field reader found, as this error.
    init(_ problem: FieldProblem) {
        switch problem {
        case .missing(let field): self = .missingField(field)
        case .invalid(let field, let reason): self = .invalidField(field, reason: reason)
        case .unknown(let field): self = .unknownField(field)
        }
    }
}
