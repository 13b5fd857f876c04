/// A rate limit that cannot be enforced, with the reason.
package struct RateLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    package let reason: String
    package var description: String { "invalid rate limit: \(reason)" }
}

/// How many requests one app key may make: a token bucket per key that refills at
/// `requestsPerSecond` and holds at most `burst` tokens. A request past it is answered
/// `429 Too Many Requests` with `Retry-After` (whole seconds, at least 1), which the SDK honours;
/// its data stays on the device until then.
///
/// A key is shared by every installation of an app, so this caps the app's whole fleet, not one
/// device: size it for the fleet (uploads, policy fetches and reports per second, all devices).
package struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    /// Tokens added per second; above 0. Fractions are allowed (0.5: one request every 2 s).
    package let requestsPerSecond: Double
    /// The most requests accepted at once after a quiet period; at least 1.
    package let burst: Int

    /// - Parameter burst: default: two seconds' worth of requests (at least 1).
    /// - Throws: ``RateLimitError`` for a rate that is not a number above 0, or a burst below 1.
    package init(requestsPerSecond: Double, burst: Int? = nil) throws(RateLimitError) {
        guard requestsPerSecond.isFinite, requestsPerSecond > 0 else {
            throw RateLimitError(reason: "requests per second must be a number above 0, not \(requestsPerSecond)")
        }
        let burst = burst ?? Int(min((2 * requestsPerSecond).rounded(.up), 1e9))
        guard burst >= 1 else { throw RateLimitError(reason: "the burst must be at least 1, not \(burst)") }
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }

    /// "100 requests per second, bursts of 200".
    package var description: String {
        let whole = requestsPerSecond.rounded() == requestsPerSecond && requestsPerSecond < 1e15
        return "\(whole ? String(Int64(requestsPerSecond)) : String(requestsPerSecond)) requests per second, bursts of \(burst)"
    }
}
