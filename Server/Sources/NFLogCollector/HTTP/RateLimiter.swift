import Synchronization

/// The token buckets of a collector's app keys, one per entry of its ``AppKeys``: the memory is
/// fixed when the collector starts (the number of keys in the keys file; one in development
/// mode), so no sequence of requests can make it grow. Unknown keys never reach it: they get 401.
final class RateLimiter: Sendable {
    let limit: RateLimit
    /// Bucket `i` belongs to key entry `i`; the array never changes size.
    private let buckets: Mutex<[TokenBucket]>
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant

    init(limit: RateLimit, keys: Int) {
        self.limit = limit
        self.start = clock.now
        self.buckets = Mutex(Array(repeating: TokenBucket(limit: limit, now: 0), count: keys))
    }

    /// Takes a token from key entry `index`: `nil` if the request may go on, otherwise the
    /// seconds for `Retry-After`.
    func take(key index: Int) -> Int? {
        let elapsed = clock.now - start
        let now = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return buckets.withLock { buckets in
            guard buckets.indices.contains(index) else { return nil }
            return buckets[index].take(limit: limit, now: now)
        }
    }
}
