@_spi(NFLogShared) import NFLogSupport

/// A tag pattern that cannot be used, with the reason.
public struct TagPatternError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern as given.
    public let pattern: String
    /// What is wrong with it.
    public let reason: String

    public var description: String { "invalid tag pattern \"\(pattern)\": \(reason)" }
}

extension TagPatternError {
    /// The shared pattern parser's error, as the SDK's (the memberwise initialiser stays).
    init(_ error: PatternError) {
        self.init(pattern: error.pattern, reason: error.reason)
    }
}

extension TagPattern {
    /// Parses a pattern, with the SDK's public error.
    init(checking text: String) throws(TagPatternError) {
        do { self = try TagPattern(text) } catch { throw TagPatternError(error) }
    }
}
