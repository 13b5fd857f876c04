/// SplitMix64: the simulation is the same for the same seed, on every machine.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value with probability `p` of being true.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// A log-normal duration in milliseconds around `median` (network times have a long tail).
    mutating func logNormal(median: Double, spread: Double) -> Double {
        let u1 = max(Double.random(in: 0..<1, using: &self), 1e-12), u2 = Double.random(in: 0..<1, using: &self)
        let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        return median * exp(spread * normal)
    }
}

import Foundation
