import Foundation

/// Makes UUIDv7 event ids (RFC 9562): 48 bits of Unix milliseconds, then 42 bits drawn once per
/// generator, then a 32-bit counter that starts at a random value and goes up by one per id
/// (RFC 9562 §6.2 allows a counter in the random bits).
///
/// Why not 74 fresh random bits per id: they cannot be compressed, and were half of an uploaded
/// event's bytes after gzip (~10 of 21). Consecutive ids of one generator now differ in the last
/// digits of their time and counter, and gzip sends the rest as a back-reference.
///
/// Unique: within a generator, the counter never repeats (after 2³² ids it draws new bits and a
/// new start). Across devices and launches two ids can only meet if two generators drew the same
/// 42 bits and their counters, started at independent random points of 2³², pass the same value
/// in the same millisecond: as unlikely as 74 random bits per id, since a generator's ids are
/// one random point and the steps after it. The last 8 bytes, a span's W3C span id
/// (docs/PROTOCOL.md, "Transactions"), hold the counter, so no two spans of a generator share one.
///
/// The random bits come from xoshiro256**, seeded from the system's secure generator, because a
/// system call per id would dominate the log call. Ids are not secrets: nothing is authorised by
/// knowing one.
///
/// Not thread-safe: it lives inside the RequestManager's pending-queue lock.
struct EventIDGenerator {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64
    /// `rand_a` (12 bits), then the first 30 bits of `rand_b`: drawn once per 2³² ids.
    private var shared: UInt64 = 0
    private var counter: UInt32 = 0
    /// Ids left before new bits are drawn.
    private var remaining: UInt64 = 0
    private let idsPerDraw: UInt64

    /// - Parameter idsPerDraw: how many ids share one draw; fewer only in tests.
    init(idsPerDraw: UInt64 = 1 << 32) {
        var system = SystemRandomNumberGenerator()
        repeat {
            s0 = system.next(); s1 = system.next(); s2 = system.next(); s3 = system.next()
        } while s0 | s1 | s2 | s3 == 0  // the all-zero state is the one xoshiro cannot leave
        self.idsPerDraw = max(1, min(idsPerDraw, 1 << 32))
    }

    private mutating func next() -> UInt64 {
        let result = (s1 &* 5).rotatedLeft(by: 7) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = s3.rotatedLeft(by: 45)
        return result
    }

    mutating func make(milliseconds: Int64) -> UUID {
        if remaining == 0 {
            shared = next() >> 22  // 42 bits
            counter = UInt32(truncatingIfNeeded: next())
            remaining = idsPerDraw
        }
        remaining -= 1
        counter &+= 1
        let ms = UInt64(max(0, milliseconds))
        let a = shared >> 30, b = shared  // rand_a: the top 12 bits; rand_b's first 30: the rest
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: ms >> 40), UInt8(truncatingIfNeeded: ms >> 32),
            UInt8(truncatingIfNeeded: ms >> 24), UInt8(truncatingIfNeeded: ms >> 16),
            UInt8(truncatingIfNeeded: ms >> 8), UInt8(truncatingIfNeeded: ms),
            0x70 | UInt8(truncatingIfNeeded: (a >> 8) & 0x0F), UInt8(truncatingIfNeeded: a),  // version 7
            0x80 | UInt8(truncatingIfNeeded: (b >> 24) & 0x3F), UInt8(truncatingIfNeeded: b >> 16),  // variant 10
            UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b),
            UInt8(truncatingIfNeeded: counter >> 24), UInt8(truncatingIfNeeded: counter >> 16),
            UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)
        ))
    }
}

extension UInt64 {
    @inline(__always)
    func rotatedLeft(by amount: UInt64) -> UInt64 { (self << amount) | (self >> (64 - amount)) }
}
