import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The simulation's draws, from the shared seeded generator: the same seed, the same run.
extension SeededRandom {
    /// A value with probability `p` of being true.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// A log-normal duration in milliseconds around `median` (network times have a long tail).
    mutating func logNormal(median: Double, spread: Double) -> Double {
        let u1 = max(Double.random(in: 0..<1, using: &self), 1e-12), u2 = Double.random(in: 0..<1, using: &self)
        let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        return median * exp(spread * normal)
    }
}
