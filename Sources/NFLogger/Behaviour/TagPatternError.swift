/// A tag pattern that cannot be used, with the reason.
public struct TagPatternError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern as given.
    public let pattern: String
    /// What is wrong with it.
    public let reason: String

    public var description: String { "invalid tag pattern \"\(pattern)\": \(reason)" }
}
