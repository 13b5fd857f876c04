public import Foundation

/// A policy's `rules.aggregate` entry: events whose names match are folded into one aggregate
/// per (name, window, values of the dimension parameters) rather than stored one by one.
@_spi(NFLogShared) public struct AggregateRule: Sendable, Equatable {
    @_spi(NFLogShared) public static let maxRules = 100
    @_spi(NFLogShared) public static let maxDimensions = 8
    @_spi(NFLogShared) public static let defaultMaxSeries = 2_000

    @_spi(NFLogShared) public let pattern: TagPattern
    /// The window's length, in seconds (1…86,400).
    @_spi(NFLogShared) public let window: TimeInterval
    /// Parameter names whose values split the aggregate into series.
    @_spi(NFLogShared) public let dimensions: [String]
    /// At most this many series per name and window; past it, events fold into one overflow series.
    @_spi(NFLogShared) public let maxSeries: Int

    @_spi(NFLogShared) public init(pattern: TagPattern, window: TimeInterval, dimensions: [String], maxSeries: Int) {
        self.pattern = pattern
        self.window = window
        self.dimensions = dimensions
        self.maxSeries = maxSeries
    }
}
