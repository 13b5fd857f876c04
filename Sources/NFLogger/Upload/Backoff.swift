import Foundation

/// Exponential backoff with jitter, shared by uploads and policy checks: after the n-th failure
/// in a row the wait is drawn below a ceiling of `initial × 2^(n−1)`, capped at `maximum`, so a
/// fleet of devices spreads out instead of returning together; and it is never shorter than the
/// server's `Retry-After` (itself capped at a day).
///
/// Every duration is in seconds. The random source is injected so a test can drive the
/// arithmetic; the SDK uses the system's.
struct Backoff {
    enum Jitter {
        /// Anywhere in [0, ceiling] ("full jitter"): spreads a fleet the most.
        case full
        /// In [ceiling / 2, ceiling]: never at once, for checks that are cheap to delay.
        case half
    }

    var initial: TimeInterval
    var maximum: TimeInterval
    let jitter: Jitter
    private(set) var failures = 0
    private var random: AnyGenerator

    static let longestRetryAfter: TimeInterval = 86_400

    init(initial: TimeInterval, maximum: TimeInterval, jitter: Jitter = .full,
         random: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
        self.random = AnyGenerator(base: random)
    }

    /// Counts one more failure and returns how long to wait before the next attempt.
    mutating func failed(retryAfter: TimeInterval? = nil) -> TimeInterval {
        failures += 1
        return delay(afterFailures: failures, retryAfter: retryAfter)
    }

    /// The wait after the `count`-th failure of something counted elsewhere (one batch's own
    /// failures), drawn as after that many failures in a row; the count in a row is unchanged.
    mutating func delay(afterFailures count: Int, retryAfter: TimeInterval? = nil) -> TimeInterval {
        let ceiling = min(maximum, initial * pow(2, Double(min(max(count, 1) - 1, 40))))
        let floor = jitter == .full ? 0 : ceiling / 2
        // 53 random bits as a fraction in [0, 1): no rejection loop, so any generator (even a
        // constant one in a test) gives an answer at once.
        let unit = Double(random.next() >> 11) * 0x1p-53
        var wait = floor + (max(floor, ceiling) - floor) * unit
        if let retryAfter { wait = max(wait, min(retryAfter, Self.longestRetryAfter)) }
        return wait
    }

    /// A success: the next failure starts from `initial` again.
    mutating func reset() { failures = 0 }
}

/// Holds any generator behind one concrete type.
private struct AnyGenerator: RandomNumberGenerator {
    var base: any RandomNumberGenerator
    mutating func next() -> UInt64 { base.next() }
}
