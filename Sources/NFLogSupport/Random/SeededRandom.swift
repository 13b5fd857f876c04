/// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast generator whose sequence the seed
/// fixes, so a simulation, a fault schedule or a test's values repeat exactly on every machine.
/// Not for anything someone must not predict.
@_spi(NFLogShared) public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (0 when `bound` is not positive).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

    /// A value in `0..<1`, from the top 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
}
