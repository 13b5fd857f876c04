import Foundation
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("Configuration files")
struct ConfigurationFileTests {
    static var valid: [String: Any] { [
        "app_key": "k-123", "tenant_id": "acme",
        "upload_url": "https://collector.example.com/v1/events",
        "policy_url": "https://collector.example.com/v1/policy",
        "database_path": "data/events.sqlite",
        "app_id": "com.example.app", "app_version": "1.4.2",
    ] }

    func write(_ object: [String: Any], in directory: TemporaryDirectory) throws -> URL {
        let url = directory.url.appendingPathComponent("nflogger.json")
        try JSONSerialization.data(withJSONObject: object).write(to: url)
        return url
    }

    func load(_ object: [String: Any]) throws(ConfigurationError) -> Configuration {
        let directory = TemporaryDirectory()
        let url: URL
        do { url = try write(object, in: directory) } catch { fatalErrorInTest("cannot write the fixture: \(error)") }
        return try Configuration(contentsOf: url)
    }

    @Test("A valid file gives every field; a relative database path is resolved against the file")
    func validFile() throws {
        let directory = TemporaryDirectory()
        var object = Self.valid
        object["mode"] = "specific"
        object["specific_patterns"] = ["ui.**", "net.*"]
        object["limits"] = ["max_parameters_bytes": 1024, "max_pending_events": 500, "busy_timeout_ms": 250]
        object["upload"] = ["interval_s": 2.5, "batch_max_events": 100, "gzip_level": 9, "max_backoff_s": 60]
        object["policy_refresh_interval_s"] = 600
        object["install_id"] = "install-1"
        let configuration = try Configuration(contentsOf: write(object, in: directory))
        #expect(configuration.appKey == "k-123")
        #expect(configuration.tenantID == "acme")
        #expect(configuration.uploadURL?.absoluteString == "https://collector.example.com/v1/events")
        #expect(configuration.policyURL?.absoluteString == "https://collector.example.com/v1/policy")
        #expect(configuration.databaseURL.path == directory.url.appendingPathComponent("data/events.sqlite").path)
        #expect(configuration.appID == "com.example.app" && configuration.appVersion == "1.4.2")
        #expect(configuration.mode == .specific(try EventRules(allow: ["ui.**", "net.*"])))
        #expect(configuration.limits.maxParametersBytes == 1024 && configuration.limits.maxPendingEvents == 500)
        #expect(configuration.upload.interval == 2.5 && configuration.upload.batchMaxEvents == 100)
        #expect(configuration.upload.gzipLevel == 9 && configuration.upload.maxBackoff == 60)
        #expect(configuration.limits.busyTimeout == 0.25)  // the file's milliseconds, in seconds
        #expect(configuration.policyOptions.refreshInterval == 600 && configuration.policyOptions.installID == "install-1")
        // And it works.
        let logger = try NFLogger(configuration: configuration)
        _ = logger
    }

    @Test("Outputs from a file: a second collector, a JSON-lines directory (resolved against the file), swift-log; bad ones are named")
    func outputs() throws {
        var object = Self.valid
        object["collector_pattern"] = "app.**"
        object["outputs"] = [
            ["type": "collector", "id": "finance", "url": "https://finance.example.com/v1/events", "app_key": "f-1", "pattern": "checkout.**"],
            ["type": "jsonl", "directory": "logs", "max_file_bytes": 4096],
            ["type": "swift_log", "label": "events", "pattern": "ui.*"],
        ]
        let configuration = try load(object)
        #expect(configuration.collectorPattern == "app.**")
        #expect(configuration.outputs.map(\.id) == ["finance", "file", "swift-log"])
        #expect(configuration.outputs.map(\.pattern) == ["checkout.**", "**", "ui.*"])
        let finance = try #require(configuration.outputs.first as? CollectorOutput)
        #expect(finance.url.host == "finance.example.com" && finance.appKey == "f-1")
        #expect(configuration.outputs[1] is JSONLinesOutput)

        func rejection(_ outputs: [[String: Any]]) -> ConfigurationError? {
            var object = Self.valid
            object["outputs"] = outputs
            do { _ = try load(object) } catch { return error }
            return nil
        }
        #expect(rejection([["type": "kafka"]]) == .invalidField("outputs[0].type", reason: "must be \"collector\", \"jsonl\" or \"swift_log\", got \"kafka\""))
        #expect(rejection([["type": "jsonl", "directory": "a"], ["type": "jsonl", "directory": "b"]]) == .invalidField("outputs.file", reason: "is configured twice"))
        #expect(rejection([["type": "collector", "id": "collector", "url": "https://x.example.com", "app_key": "k"]])
            == .invalidField("outputs.collector", reason: "uses the id reserved for the collector at upload_url"))
        #expect(rejection([["type": "jsonl", "id": "Bad Id", "directory": "a"]])
            == .invalidField("outputs", reason: "has the id \"Bad Id\": use 1–64 characters from a–z, 0–9, _, - and ."))
        if case .invalidField(let field, _)? = rejection([["type": "jsonl", "directory": "a", "pattern": "a..b"]]) {
            #expect(field == "outputs.file.pattern")
        } else {
            Issue.record("a bad pattern must be named")
        }
        #expect(rejection([["type": "collector", "id": "x", "app_key": "k"]]) == .missingField("outputs[0].url"))
    }

    @Test("A missing file names the path")
    func missingFile() {
        let path = "/nonexistent/nflogger-\(UUID().uuidString).json"
        #expect(throws: ConfigurationError.fileNotFound(path: path)) {
            try Configuration(contentsOf: URL(fileURLWithPath: path))
        }
    }

    @Test("Invalid JSON is reported as such")
    func invalidJSON() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("broken.json")
        try Data("{ \"app_key\": ".utf8).write(to: url)
        #expect {
            try Configuration(contentsOf: url)
        } throws: { error in
            guard case ConfigurationError.invalidJSON(let path, _) = error else { return false }
            return path == url.path
        }
        try Data("[1, 2]".utf8).write(to: url)
        #expect(throws: ConfigurationError.invalidJSON(path: url.path, reason: "the top level must be an object")) {
            try Configuration(contentsOf: url)
        }
    }

    @Test("Each required field, when missing, is named", arguments: ["app_key", "tenant_id", "upload_url", "policy_url", "database_path"])
    func missingField(field: String) {
        var object = Self.valid
        object.removeValue(forKey: field)
        #expect(throws: ConfigurationError.missingField(field)) { try load(object) }
    }

    @Test("Bad fields are named", arguments: [
        ("upload_url", #""ftp://example.com/x""#),
        ("policy_url", #""not a url at all""#),
        ("app_key", "42"),
        ("app_key", #""""#),
        ("database_path", #"["x"]"#),
        ("mode", #""loud""#),
        ("app_version", #""""#),
    ])
    func badField(field: String, json: String) throws {
        var object = Self.valid
        object[field] = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        #expect {
            try load(object)
        } throws: { error in
            guard case ConfigurationError.invalidField(let named, _) = error else { return false }
            return named == field
        }
    }

    @Test("Nested and pattern fields are named with their path")
    func nestedFields() {
        var object = Self.valid
        object["limits"] = ["max_pending_events": 1.5]
        #expect(throws: ConfigurationError.invalidField("limits.max_pending_events", reason: "must be a whole number")) { try load(object) }
        object["limits"] = ["max_pending_events": 0]
        #expect(throws: ConfigurationError.invalidField("limits.max_pending_events", reason: "must be at least 1")) { try load(object) }
        object["limits"] = ["max_pending_event": 10]
        #expect(throws: ConfigurationError.unknownField("limits.max_pending_event")) { try load(object) }
        object["limits"] = nil
        object["upload"] = ["gzip_level": 11]
        #expect(throws: ConfigurationError.invalidField("upload.gzip_level", reason: "must be between 0 and 9")) { try load(object) }
        object["upload"] = ["batch_max_events": 0]
        #expect(throws: ConfigurationError.invalidField("upload.batch_max_events", reason: "must be between 1 and 10000")) { try load(object) }
        object["upload"] = nil
        object["limits"] = nil
        object["mode"] = "specific"
        #expect(throws: ConfigurationError.missingField("specific_patterns")) { try load(object) }
        object["specific_patterns"] = ["ui..tap"]
        #expect {
            try load(object)
        } throws: { error in
            guard case ConfigurationError.invalidField("specific_patterns", let reason) = error else { return false }
            return reason.contains("ui..tap")
        }
    }

    @Test("An absurd idle timeout is an error, not a crash")
    func hugeIdleTimeout() {
        for value in [1e300, -1.0, 1e12] {
            var object = Self.valid
            object["session_idle_timeout_s"] = value
            #expect {
                try load(object)
            } throws: { error in
                guard case ConfigurationError.invalidField("session_idle_timeout_s", _) = error else { return false }
                return true
            }
        }
    }

    @Test("specific_patterns must come with mode specific, and must not be empty")
    func patternsWithoutSpecificMode() {
        var object = Self.valid
        object["specific_patterns"] = ["ui.*"]
        #expect(throws: ConfigurationError.invalidField("specific_patterns", reason: "is only used with \"mode\": \"specific\"")) { try load(object) }
        object["mode"] = "specific"
        object["specific_patterns"] = [String]()
        #expect {
            try load(object)
        } throws: { error in
            guard case ConfigurationError.invalidField("specific_patterns", _) = error else { return false }
            return true
        }
    }

    @Test("An unknown field is rejected, naming it")
    func unknownField() {
        var object = Self.valid
        object["databse_path"] = "typo.sqlite"
        #expect(throws: ConfigurationError.unknownField("databse_path")) { try load(object) }
    }

    @Test("Limits set in code are checked when the logger is created")
    func codeLimits() {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxPendingEvents = 0
        #expect(throws: ConfigurationError.invalidField("limits.max_pending_events", reason: "must be at least 1")) {
            try NFLogger(configuration: configuration)
        }
        configuration = directory.configuration()
        configuration.uploadURL = URL(string: "mailto:someone@example.com")
        #expect(throws: ConfigurationError.self) { try NFLogger(configuration: configuration) }
    }

    @Test("Durations set in code (seconds) outside their ranges, NaN and infinity are errors, not crashes")
    func codeDurations() {
        let directory = TemporaryDirectory()
        let cases: [(String, (inout Configuration) -> Void)] = [
            ("policy_refresh_interval_s", { $0.policyOptions.refreshInterval = .nan }),
            ("policy_refresh_interval_s", { $0.policyOptions.refreshInterval = .infinity }),
            ("policy_refresh_interval_s", { $0.policyOptions.refreshInterval = 0.5 }),
            ("session_idle_timeout_s", { $0.sessionIdleTimeout = .nan }),
            ("session_idle_timeout_s", { $0.sessionIdleTimeout = 8 * 86_400 }),
            ("limits.busy_timeout_ms", { $0.limits.busyTimeout = -1 }),
            ("limits.max_event_age_s", { $0.limits.maxEventAge = .infinity }),
            ("limits.span_timeout_s", { $0.limits.spanTimeout = .nan }),
            ("upload.interval_s", { $0.upload.interval = 0.001 }),
            ("upload.initial_backoff_s", { $0.upload.initialBackoff = .nan }),
            ("upload.initial_backoff_s", { $0.upload.maxBackoff = .nan }),  // no initial backoff is at most NaN
            ("upload.max_backoff_s", { $0.upload.maxBackoff = 2 * 86_400 }),
            ("upload.refused_backoff_s", { $0.upload.refusedBackoff = .infinity }),
            ("upload.request_timeout_s", { $0.upload.requestTimeout = 0 }),
        ]
        for (field, change) in cases {
            var configuration = directory.configuration()
            change(&configuration)
            #expect {
                try NFLogger(configuration: configuration)
            } throws: { error in
                guard case ConfigurationError.invalidField(let named, _) = error else { return false }
                return named == field
            }
        }
    }

    @Test("Seconds become whole nanoseconds and milliseconds, saturating, never trapping")
    func secondsInWholeUnits() {
        #expect(TimeInterval(1.5).nanoseconds == 1_500_000_000 && TimeInterval(1.5).milliseconds == 1_500)
        #expect(TimeInterval(-2).nanoseconds == 0 && TimeInterval(-2).milliseconds == -2_000)
        #expect(TimeInterval.nan.nanoseconds == 0 && TimeInterval.nan.milliseconds == 0)
        #expect(TimeInterval.infinity.nanoseconds == .max && TimeInterval.infinity.milliseconds == .max)
        #expect((-TimeInterval.infinity).milliseconds == .min)
        #expect(TimeInterval(1e300).nanoseconds == .max && TimeInterval(1e300).milliseconds == .max)
        #expect(TimeInterval(1e300).dispatchInterval == .nanoseconds(.max))
    }
}

/// Stops a test that cannot set up its own fixture.
func fatalErrorInTest(_ message: String) -> Never {
    Issue.record(Comment(rawValue: message))
    preconditionFailure(message)
}
