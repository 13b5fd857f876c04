/// What a report covers: a time range, one app version, and for aggregates one value of one
/// dimension. Unset parts select everything; with none set the report is the whole store's.
///
/// The time range and the app version apply to every section: events and spans by their device
/// `timestamp` (a span by its start), sessions by their start, aggregates by their `start`, and
/// each of them by its context's `app_version`. The dimension selects aggregates only.
public struct ReportFilter: Sendable, Equatable {
    /// Unix milliseconds, inclusive: only what happened (or, for an aggregate, started) at or
    /// after this.
    public var from: Int64?
    /// Unix milliseconds, exclusive: only what happened (or started) before this.
    public var to: Int64?
    /// Only events, spans, sessions and aggregates whose context's `app_version` is this.
    public var appVersion: String?
    /// Aggregates whose dimensions hold this key with this value (an overflow aggregate has none).
    public var dimension: Dimension?

    public struct Dimension: Sendable, Equatable {
        public let key: String
        public let value: String

        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }

        /// `key=value`, split at the first `=`: a key of 1…256 bytes, a value of at most 256
        /// bytes (the protocol's bounds); `nil` otherwise.
        public init?(parsing text: String) {
            guard let equals = text.firstIndex(of: "=") else { return nil }
            let key = String(text[..<equals])
            let value = String(text[text.index(after: equals)...])
            guard (1...256).contains(key.utf8.count), value.utf8.count <= 256 else { return nil }
            self.init(key: key, value: value)
        }

        /// `key=value`, as ``init(parsing:)`` reads it.
        public var text: String { key + "=" + value }
    }

    public init(from: Int64? = nil, to: Int64? = nil, appVersion: String? = nil, dimension: Dimension? = nil) {
        self.from = from
        self.to = to
        self.appVersion = appVersion
        self.dimension = dimension
    }

    /// Whether the events, spans and sessions are filtered (a time range or an app version is
    /// set): the report then counts the matching events instead of reading the running totals.
    public var selectsEvents: Bool { from != nil || to != nil || appVersion != nil }

    /// Whether `text` can be an ``appVersion``: 1 to 256 bytes.
    public static func isValidAppVersion(_ text: String) -> Bool {
        (1...256).contains(text.utf8.count)
    }
}

/// `{"from": ms|null, "to": ms|null, "app_version": s|null, "dimension": "k=v"|null}`: every key
/// present, `null` when unset, as the report echoes the filter it applied.
extension ReportFilter: Codable {
    enum CodingKeys: String, CodingKey {
        case from, to, dimension
        case appVersion = "app_version"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        // `encode` of an Optional writes `null`; `encodeIfPresent` would leave the key out.
        try c.encode(from, forKey: .from)
        try c.encode(to, forKey: .to)
        try c.encode(appVersion, forKey: .appVersion)
        try c.encode(dimension?.text, forKey: .dimension)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var dimension: Dimension?
        if let text = try c.decodeIfPresent(String.self, forKey: .dimension) {
            guard let parsed = Dimension(parsing: text) else {
                throw DecodingError.dataCorruptedError(forKey: .dimension, in: c, debugDescription: "not KEY=VALUE")
            }
            dimension = parsed
        }
        self.init(from: try c.decodeIfPresent(Int64.self, forKey: .from), to: try c.decodeIfPresent(Int64.self, forKey: .to),
                  appVersion: try c.decodeIfPresent(String.self, forKey: .appVersion), dimension: dimension)
    }
}

extension ReportFilter {
    /// The text report's line naming what is filtered; `nil` when nothing is.
    var line: String? {
        var parts: [String] = []
        if let from { parts.append("from \(from) ms") }
        if let to { parts.append("to \(to) ms (exclusive)") }
        if let appVersion { parts.append("app version \(appVersion)") }
        if let dimension { parts.append("aggregates with \(dimension.text)") }
        return parts.isEmpty ? nil : "Filter: " + parts.joined(separator: " · ")
    }
}
