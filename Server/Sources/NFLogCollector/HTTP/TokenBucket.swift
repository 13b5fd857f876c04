/// One key's allowance: `tokens` refill continuously at the limit's rate up to its burst; a
/// request takes one. Pure arithmetic on a time the caller gives, so it is tested without a clock.
struct TokenBucket: Sendable {
    private(set) var tokens: Double
    /// When `tokens` was last brought up to date, in seconds on the caller's monotonic clock.
    private var updated: Double

    /// A full bucket: a key's first requests are never refused.
    init(limit: RateLimit, now: Double) {
        self.tokens = Double(limit.burst)
        self.updated = now
    }

    /// Takes a token if there is one (`nil`); otherwise the whole seconds to wait until there is
    /// (at least 1), for `Retry-After`.
    mutating func take(limit: RateLimit, now: Double) -> Int? {
        // A clock that went backwards (it should not: it is monotonic) adds nothing.
        tokens = min(Double(limit.burst), tokens + max(0, now - updated) * limit.requestsPerSecond)
        updated = max(updated, now)
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        let wait = ((1 - tokens) / limit.requestsPerSecond).rounded(.up)
        return Int(min(max(wait, 1), 86_400))
    }
}
