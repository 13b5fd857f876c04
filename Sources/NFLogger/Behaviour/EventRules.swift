@_spi(NFLogShared) import NFLogSupport

/// Which events are recorded, by name: lists of tag patterns over dot-separated names, with
/// fluentd's semantics.
///
/// - `a.b` matches exactly `a.b`; `*` matches one part (`a.*` matches `a.b`, not `a.b.c`), or
///   any run of characters inside a part (`ui.tap_*`); `**` matches zero or more parts
///   (`a.**` matches `a`, `a.b`, `a.b.c`); `{x,y}` matches either alternative (`{ui,net}.*`).
///
/// - `allow`: in ``LogMode/specific(_:)``, only names matching one of these are recorded
///   (active mode records every name and ignores this list).
/// - `deny`: names matching one of these are never recorded; deny wins over allow.
/// - `sampling`: the first rule whose pattern matches gives the share of installs that record
///   the event (0…1); names no rule matches are recorded by every install.
public struct EventRules: Sendable, Equatable, CustomStringConvertible {
    let allow: [TagPattern]
    let deny: [TagPattern]
    let sampling: [SamplingRule]

    /// No allow list, nothing denied, nothing sampled.
    public static let none = EventRules(allow: [TagPattern]())

    /// Rules from already-parsed patterns.
    init(allow: [TagPattern], deny: [TagPattern] = [], sampling: [SamplingRule] = []) {
        self.allow = allow
        self.deny = deny
        self.sampling = sampling
    }

    /// Rules from pattern strings.
    /// - Throws: ``TagPatternError`` for the first invalid pattern; no rules are created.
    public init(allow: [String], deny: [String] = [], sampling: [(pattern: String, rate: Double)] = []) throws(TagPatternError) {
        self.allow = try Self.parse(allow)
        self.deny = try Self.parse(deny)
        var rules: [SamplingRule] = []
        for (pattern, rate) in sampling { rules.append(SamplingRule(pattern: try TagPattern(checking: pattern), rate: rate)) }
        self.sampling = rules
    }

    /// The patterns as written: `allow [a.*] deny [debug.**] sampling [net.*: 0.1]`.
    public var description: String {
        var parts: [String] = []
        if !allow.isEmpty { parts.append("allow [\(allow.map(\.text).joined(separator: ", "))]") }
        if !deny.isEmpty { parts.append("deny [\(deny.map(\.text).joined(separator: ", "))]") }
        if !sampling.isEmpty { parts.append("sampling [\(sampling.map { "\($0.pattern.text): \($0.rate)" }.joined(separator: ", "))]") }
        return parts.isEmpty ? "none" : parts.joined(separator: " ")
    }

    private static func parse(_ texts: [String]) throws(TagPatternError) -> [TagPattern] {
        var patterns: [TagPattern] = []
        patterns.reserveCapacity(texts.count)
        for text in texts { patterns.append(try TagPattern(checking: text)) }
        return patterns
    }

    /// Whether the allow list selects an event with this (already validated) name.
    func selects(_ name: String) -> Bool {
        allow.contains { $0.matches(name) }
    }

    /// Whether the deny list refuses this name.
    func denies(_ name: String) -> Bool {
        deny.contains { $0.matches(name) }
    }

    /// The share of installs that record this name: the first matching sampling rule's, or 1.
    func samplingRate(for name: String) -> Double {
        sampling.first { $0.pattern.matches(name) }?.rate ?? 1
    }

}
