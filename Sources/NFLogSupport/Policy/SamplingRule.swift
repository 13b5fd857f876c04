/// A share of installs (0…1) that record events whose names match a pattern.
@_spi(NFLogShared) public struct SamplingRule: Sendable, Equatable {
    @_spi(NFLogShared) public let pattern: TagPattern
    /// 0 records nothing, 1 everything. Values outside 0…1 are clamped; NaN counts as 1.
    @_spi(NFLogShared) public let rate: Double

    @_spi(NFLogShared) public init(pattern: TagPattern, rate: Double) {
        self.pattern = pattern
        self.rate = rate.isNaN ? 1 : min(1, max(0, rate))
    }
}
