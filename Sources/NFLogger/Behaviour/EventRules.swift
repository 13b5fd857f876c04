/// The selection rules of ``LogMode/specific(_:)``: an event is recorded when any of the
/// `allow` patterns matches its name.
public struct EventRules: Sendable, Equatable {
    /// The patterns that select events for recording.
    public let allow: [TagPattern]

    /// Rules from already-parsed patterns.
    public init(allow: [TagPattern]) {
        self.allow = allow
    }

    /// Rules from pattern strings.
    /// - Throws: ``TagPatternError`` for the first invalid pattern; no rules are created.
    public init(allow: [String]) throws(TagPatternError) {
        var patterns: [TagPattern] = []
        patterns.reserveCapacity(allow.count)
        for text in allow { patterns.append(try TagPattern(text)) }
        self.allow = patterns
    }

    /// Whether these rules select an event with this (already validated) name.
    public func selects(_ name: String) -> Bool {
        allow.contains { $0.matches(name) }
    }
}
