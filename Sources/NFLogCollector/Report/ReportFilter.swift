/// Which aggregates a report summarises: those that start in a time range, those with one value
/// of one dimension. The rest of the report (events, use cases, sessions) is not filtered.
public struct ReportFilter: Sendable, Equatable {
    /// Unix milliseconds: aggregates whose `start` is at least this (inclusive).
    public var from: Int64?
    /// Unix milliseconds: aggregates whose `start` is before this (exclusive).
    public var to: Int64?
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
    }

    public init(from: Int64? = nil, to: Int64? = nil, dimension: Dimension? = nil) {
        self.from = from
        self.to = to
        self.dimension = dimension
    }
}
