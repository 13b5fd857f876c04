import Testing
@testable import NFLogCollector

@Suite("Per-key rate limits")
struct RateLimitTests {
    @Test("A bucket gives its burst at once, then one request per refill, and says how long to wait")
    func bucket() throws {
        let limit = try RateLimit(requestsPerSecond: 2, burst: 3)
        var bucket = TokenBucket(limit: limit, now: 0)
        for _ in 0..<3 { #expect(bucket.take(limit: limit, now: 0) == nil) }
        #expect(bucket.take(limit: limit, now: 0) == 1, "half a second to wait is announced as 1")
        #expect(bucket.take(limit: limit, now: 0.5) == nil)
        #expect(bucket.take(limit: limit, now: 0.5) == 1)
        // A long quiet period refills up to the burst, not beyond.
        for _ in 0..<3 { #expect(bucket.take(limit: limit, now: 1000) == nil) }
        #expect(bucket.take(limit: limit, now: 1000) != nil)
        // A clock that steps back adds nothing.
        #expect(bucket.take(limit: limit, now: 10) != nil)
    }

    @Test("Retry-After is the whole seconds until the next token")
    func retryAfter() throws {
        let slow = try RateLimit(requestsPerSecond: 0.25, burst: 1)
        var bucket = TokenBucket(limit: slow, now: 0)
        #expect(bucket.take(limit: slow, now: 0) == nil)
        #expect(bucket.take(limit: slow, now: 0) == 4)
        #expect(bucket.take(limit: slow, now: 2) == 2)
        #expect(bucket.take(limit: slow, now: 4) == nil)
    }

    @Test("Limits that cannot be enforced are refused; the burst defaults to two seconds' worth")
    func validation() throws {
        for rate in [0, -1, Double.nan, .infinity] {
            #expect(throws: RateLimitError.self) { try RateLimit(requestsPerSecond: rate) }
        }
        #expect(throws: RateLimitError.self) { try RateLimit(requestsPerSecond: 1, burst: 0) }
        #expect(try RateLimit(requestsPerSecond: 100).burst == 200)
        #expect(try RateLimit(requestsPerSecond: 0.01).burst == 1)
        #expect(try RateLimit(requestsPerSecond: 100).description == "100 requests per second, bursts of 200")
        #expect(try RateLimit(requestsPerSecond: 0.5, burst: 3).description == "0.5 requests per second, bursts of 3")
    }

    @Test("The limiter holds one bucket per key, fixed at start: other keys keep their allowance")
    func limiter() throws {
        let limiter = RateLimiter(limit: try RateLimit(requestsPerSecond: 0.001, burst: 1), keys: 2)
        #expect(limiter.take(key: 0) == nil)
        #expect(limiter.take(key: 0) != nil)
        #expect(limiter.take(key: 1) == nil)
    }
}
