import Foundation

/// A policy's `rules.aggregate` entry: events whose names match are folded into one aggregate
/// per (name, window, values of the dimension parameters) rather than stored one by one.
struct AggregateRule: Sendable, Equatable {
    static let maxRules = 100
    static let maxDimensions = 8
    static let defaultMaxSeries = 2_000

    let pattern: TagPattern
    /// The window's length, in seconds (1…86,400).
    let window: TimeInterval
    /// Parameter names whose values split the aggregate into series.
    let dimensions: [String]
    /// At most this many series per name and window; past it, events fold into one overflow series.
    let maxSeries: Int
}
