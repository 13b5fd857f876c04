import Foundation

/// Makes UUIDv7 event ids (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits.
///
/// Time-ordered ids keep SQLite's indexes and the collector's de-duplication index append-mostly.
/// The random bits come from xoshiro256**, seeded from the system's secure generator, because a
/// system call per event would dominate the log call; 74 bits keep collisions out of reach even
/// for events logged in the same millisecond across a whole fleet.
///
/// Not thread-safe: it lives inside the RequestManager's pending-queue lock.
struct EventIDGenerator {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    init() {
        var system = SystemRandomNumberGenerator()
        repeat {
            s0 = system.next(); s1 = system.next(); s2 = system.next(); s3 = system.next()
        } while s0 | s1 | s2 | s3 == 0  // the all-zero state is the one xoshiro cannot leave
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
        let ms = UInt64(max(0, milliseconds))
        let a = next(), b = next()
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: ms >> 40), UInt8(truncatingIfNeeded: ms >> 32),
            UInt8(truncatingIfNeeded: ms >> 24), UInt8(truncatingIfNeeded: ms >> 16),
            UInt8(truncatingIfNeeded: ms >> 8), UInt8(truncatingIfNeeded: ms),
            0x70 | UInt8(truncatingIfNeeded: a & 0x0F), UInt8(truncatingIfNeeded: a >> 8),      // version 7
            0x80 | UInt8(truncatingIfNeeded: (a >> 16) & 0x3F), UInt8(truncatingIfNeeded: a >> 24),  // variant 10
            UInt8(truncatingIfNeeded: b), UInt8(truncatingIfNeeded: b >> 8),
            UInt8(truncatingIfNeeded: b >> 16), UInt8(truncatingIfNeeded: b >> 24),
            UInt8(truncatingIfNeeded: b >> 32), UInt8(truncatingIfNeeded: b >> 40)
        ))
    }
}

extension UInt64 {
    @inline(__always)
    func rotatedLeft(by amount: UInt64) -> UInt64 { (self << amount) | (self >> (64 - amount)) }
}
