public import Foundation

extension PolicyDocument {
    /// Parses and validates a policy document. Nothing about it is applied here.
    ///
    /// - Parameter data: the policy document (UTF-8 JSON).
    /// - Parameter now: expired policies (`expires_at` ≤ now) are refused.
    /// - Throws: ``PolicyDocumentError`` for the first problem: too large, not JSON, an unknown or
    ///   mistyped field, a value out of range, a bad pattern, an unknown mode, expired.
    @_spi(NFLogShared) public static func parse(_ data: Data, now: Date = Date()) throws(PolicyDocumentError) -> PolicyDocument {
        guard data.count <= maxBytes else { throw .tooLarge(bytes: data.count) }
        // UTF-8 only: the cache stores the text, and the protocol says so.
        guard String(data: data, encoding: .utf8) != nil, !data.starts(with: [0xFE, 0xFF]), !data.starts(with: [0xFF, 0xFE]) else {
            throw .invalidJSON("the policy must be UTF-8")
        }
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw PolicyDocumentError.invalidJSON("the top level must be an object")
            }
            object = parsed
        } catch let error as PolicyDocumentError {
            throw error
        } catch {
            throw .invalidJSON((error as NSError).localizedDescription)
        }
        let policy = try PolicyDocument(FieldReader(object, failure: PolicyDocumentError.init))
        if let expiry = policy.expiresAt, expiry <= now { throw .expired(expiry) }
        return policy
    }

    private init(_ fields: FieldReader<PolicyDocumentError>) throws(PolicyDocumentError) {
        try fields.rejectUnknown(["version", "mode", "rules", "upload", "database", "span_timeout_s",
                                  "refresh_interval_s", "min_sdk_version", "privacy_zones", "expires_at", "auto", "outputs"])
        guard let version = try fields.integer("version") else { throw .missing("version") }
        guard version == Self.supportedVersion else { throw .unsupportedVersion(version) }
        self.version = version
        let modeName = try fields.requiredString("mode")
        guard let mode = Mode(rawValue: modeName) else { throw .unknownMode(modeName) }
        self.mode = mode

        var allow: [TagPattern] = [], deny: [TagPattern] = [], sampling: [SamplingRule] = []
        var priorities: [PriorityRule] = []
        var aggregates: [AggregateRule] = []
        if let rules = try fields.object("rules") {
            try rules.rejectUnknown(["allow", "deny", "sampling", "priorities", "aggregate"])
            aggregates = try Self.aggregateRules(rules)
            if let entries = try rules.objects("priorities") {
                for entry in entries {
                    try entry.rejectUnknown(["pattern", "priority"])
                    let text = try entry.requiredString("pattern")
                    let pattern: TagPattern
                    do { pattern = try TagPattern(text) } catch { throw .invalidPattern(field: entry.path("pattern"), error) }
                    guard let priority = try entry.integer("priority") else { throw .missing(entry.path("priority")) }
                    guard (-1_000...1_000).contains(priority) else { throw .invalid(entry.path("priority"), "must be between -1000 and 1000") }
                    priorities.append(PriorityRule(pattern: pattern, priority: priority))
                }
            }
            allow = try Self.patterns(rules, "allow")
            deny = try Self.patterns(rules, "deny")
            if let entries = try rules.objects("sampling") {
                for entry in entries {
                    try entry.rejectUnknown(["pattern", "rate"])
                    let text = try entry.requiredString("pattern")
                    let pattern: TagPattern
                    do { pattern = try TagPattern(text) } catch { throw .invalidPattern(field: entry.path("pattern"), error) }
                    guard let rate = try entry.number("rate") else { throw .missing(entry.path("rate")) }
                    guard (0...1).contains(rate) else { throw .invalid(entry.path("rate"), "must be between 0 and 1") }
                    sampling.append(SamplingRule(pattern: pattern, rate: rate))
                }
            }
        }
        // Patterns run on the app's thread for every event: bound their total size, since braces
        // multiply (`{a,b}{a,b}…` fits in a few bytes and expands a thousandfold).
        let alternatives = (allow + deny + sampling.map(\.pattern) + priorities.map(\.pattern) + aggregates.map(\.pattern))
            .reduce(0) { $0 + $1.alternatives.count }
        guard alternatives <= Self.maxAlternatives else {
            throw .invalid("rules", "the patterns expand to \(alternatives) alternatives; the limit is \(Self.maxAlternatives)")
        }
        if mode == .specific && allow.isEmpty {
            throw .invalid("rules.allow", "must list at least one pattern in specific mode (an empty list would record nothing)")
        }
        self.allow = allow
        self.deny = deny
        self.sampling = sampling
        self.priorities = priorities
        self.aggregates = aggregates

        var upload = Upload()
        if let fields = try fields.object("upload") {
            try fields.rejectUnknown(["interval_s", "batch_max_events", "batch_max_bytes", "gzip_level"])
            upload.interval = try Self.seconds(fields, "interval_s", 1...86_400)
            upload.batchMaxEvents = try Self.integer(fields, "batch_max_events", 1...10_000)
            upload.batchMaxBytes = try Self.integer(fields, "batch_max_bytes", 1_024...(8 << 20))
            upload.gzipLevel = try Self.integer(fields, "gzip_level", 0...9)
        }
        self.upload = upload

        var database = Database()
        if let fields = try fields.object("database") {
            try fields.rejectUnknown(["max_rows", "max_bytes", "max_age_s"])
            database.maxRows = try Self.integer(fields, "max_rows", 100...100_000_000)
            database.maxBytes = try Self.integer(fields, "max_bytes", (64 << 10)...(16 << 30))
            database.maxAge = try Self.seconds(fields, "max_age_s", 60...(366 * 86_400))
        }
        self.database = database

        spanTimeout = try Self.seconds(fields, "span_timeout_s", 1...(30 * 86_400))
        refreshInterval = try Self.seconds(fields, "refresh_interval_s", 60...(7 * 86_400))
        if let text = try fields.string("min_sdk_version") {
            guard SemanticVersion(text) != nil else { throw .invalid("min_sdk_version", "must be a version such as 1.4.0") }
            minimumSDKVersion = text
        } else {
            minimumSDKVersion = nil
        }

        var zones: [PrivacyZone] = []
        if let entries = try fields.objects("privacy_zones") {
            guard entries.count <= 1_000 else { throw .invalid("privacy_zones", "must list at most 1000 zones") }
            for entry in entries {
                try entry.rejectUnknown(["latitude", "longitude", "radius_m", "name"])
                guard let latitude = try entry.number("latitude") else { throw .missing(entry.path("latitude")) }
                guard (-90...90).contains(latitude) else { throw .invalid(entry.path("latitude"), "must be between -90 and 90") }
                guard let longitude = try entry.number("longitude") else { throw .missing(entry.path("longitude")) }
                guard (-180...180).contains(longitude) else { throw .invalid(entry.path("longitude"), "must be between -180 and 180") }
                guard let radius = try entry.number("radius_m") else { throw .missing(entry.path("radius_m")) }
                guard radius > 0 && radius <= 100_000 else { throw .invalid(entry.path("radius_m"), "must be more than 0 and at most 100000 metres") }
                zones.append(PrivacyZone(latitude: latitude, longitude: longitude, radius: radius, name: try entry.string("name")))
            }
        }
        privacyZones = zones

        var automatic = AutomaticSources()
        if let fields = try fields.object("auto") {
            try fields.rejectUnknown(["log", "tracing", "metrics"])
            automatic.log = try fields.bool("log") ?? true
            automatic.tracing = try fields.bool("tracing") ?? true
            automatic.metrics = try fields.bool("metrics") ?? true
        }
        self.automatic = automatic

        var disabledOutputs: Set<String> = []
        if let fields = try fields.object("outputs") {
            try fields.rejectUnknown(["disabled"])
            for (index, id) in (try fields.stringArray("disabled") ?? []).enumerated() {
                guard Self.isValidOutputID(id) else {
                    throw .invalid("outputs.disabled[\(index)]", "must be an output id: 1–64 characters from a–z, 0–9, _, - and .")
                }
                disabledOutputs.insert(id)
            }
        }
        self.disabledOutputs = disabledOutputs

        if let text = try fields.string("expires_at") {
            guard let date = Self.parseDate(text) else {
                throw .invalid("expires_at", "must be an RFC 3339 time such as 2027-01-31T00:00:00Z")
            }
            expiresAt = date
        } else {
            expiresAt = nil
        }
    }

    private static func patterns(_ fields: FieldReader<PolicyDocumentError>, _ key: String) throws(PolicyDocumentError) -> [TagPattern] {
        guard let texts = try fields.stringArray(key) else { return [] }
        var patterns: [TagPattern] = []
        for (index, text) in texts.enumerated() {
            do { patterns.append(try TagPattern(text)) } catch {
                throw .invalidPattern(field: "\(fields.path(key))[\(index)]", error)
            }
        }
        return patterns
    }

    private static func integer(_ fields: FieldReader<PolicyDocumentError>, _ key: String, _ range: ClosedRange<Int>) throws(PolicyDocumentError) -> Int? {
        guard let value = try fields.integer(key) else { return nil }
        guard range.contains(value) else { throw .invalid(fields.path(key), "must be between \(range.lowerBound) and \(range.upperBound)") }
        return value
    }

    private static func seconds(_ fields: FieldReader<PolicyDocumentError>, _ key: String, _ range: ClosedRange<Int>) throws(PolicyDocumentError) -> TimeInterval? {
        guard let value = try fields.number(key) else { return nil }
        guard (Double(range.lowerBound)...Double(range.upperBound)).contains(value) else {
            throw .invalid(fields.path(key), "must be between \(range.lowerBound) and \(range.upperBound) seconds")
        }
        return value
    }

    static func parseDate(_ text: String) -> Date? {
        // ICU, under ISO8601DateFormatter, is lenient (`2030-1-1T0:0:0Z`, 40-digit years), misreads
        // more than ten fraction digits, and dies of SIGFPE on some forty (found by Fuzz/): only
        // RFC 3339's exact shape reaches it.
        guard hasRFC3339Shape(text) else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// `YYYY-MM-DDTHH:MM:SS`, then up to 9 fraction digits, then `Z` or `±HH:MM`: digits where
    /// digits go (whether they make a real time is the formatter's to say).
    static func hasRFC3339Shape(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Bool {
            range.upperBound <= bytes.count && bytes[range].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        func byte(_ index: Int, _ expected: Unicode.Scalar) -> Bool { index < bytes.count && bytes[index] == UInt8(ascii: expected) }
        guard digits(0..<4), byte(4, "-"), digits(5..<7), byte(7, "-"), digits(8..<10), byte(10, "T"),
              digits(11..<13), byte(13, ":"), digits(14..<16), byte(16, ":"), digits(17..<19) else { return false }
        var index = 19
        if byte(index, ".") {
            let start = index + 1
            index = start
            while digits(index..<index + 1) { index += 1 }
            guard (1...9).contains(index - start) else { return false }
        }
        if byte(index, "Z") { return index + 1 == bytes.count }
        guard byte(index, "+") || byte(index, "-") else { return false }
        return digits(index + 1..<index + 3) && byte(index + 3, ":") && digits(index + 4..<index + 6) && index + 6 == bytes.count
    }

    /// `rules.aggregate`: which events are folded into aggregates, per window and dimensions.
    private static func aggregateRules(_ rules: FieldReader<PolicyDocumentError>) throws(PolicyDocumentError) -> [AggregateRule] {
        guard let entries = try rules.objects("aggregate") else { return [] }
        guard entries.count <= AggregateRule.maxRules else {
            throw .invalid("rules.aggregate", "must list at most \(AggregateRule.maxRules) rules")
        }
        var result: [AggregateRule] = []
        for entry in entries {
            try entry.rejectUnknown(["pattern", "window_s", "dimensions", "max_series"])
            let text = try entry.requiredString("pattern")
            let pattern: TagPattern
            do { pattern = try TagPattern(text) } catch { throw .invalidPattern(field: entry.path("pattern"), error) }
            guard let window = try seconds(entry, "window_s", 1...86_400) else { throw .missing(entry.path("window_s")) }
            let dimensions = try entry.stringArray("dimensions") ?? []
            guard dimensions.count <= AggregateRule.maxDimensions else {
                throw .invalid(entry.path("dimensions"), "must list at most \(AggregateRule.maxDimensions) parameter names")
            }
            for name in dimensions where name.isEmpty || name.utf8.count > EventNameRules.maxParameterKeyBytes {
                throw .invalid(entry.path("dimensions"), "parameter names must be 1…\(EventNameRules.maxParameterKeyBytes) bytes")
            }
            guard Set(dimensions).count == dimensions.count else { throw .invalid(entry.path("dimensions"), "must not repeat a name") }
            let maxSeries = try integer(entry, "max_series", 1...100_000) ?? AggregateRule.defaultMaxSeries
            result.append(AggregateRule(pattern: pattern, window: window, dimensions: dimensions, maxSeries: maxSeries))
        }
        return result
    }

}
