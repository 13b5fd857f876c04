import Foundation

/// Makes UUIDv7 event ids (RFC 9562): 48 bits of Unix milliseconds, a 12-bit counter within the
/// millisecond (`rand_a`, RFC 9562 §6.2 method 1), then 62 bits drawn once per generator
/// (`rand_b`).
///
/// Why not 74 fresh random bits per id: they cannot be compressed, and were half of an uploaded
/// event's bytes after gzip (~10 of 21). Ids from one generator now share their last 62 bits,
/// which gzip sends as a back-reference, and differ by their millisecond and counter.
///
/// Unique: within a generator, (millisecond, counter) never repeats: the counter starts at a
/// random value below 2,048 at each new millisecond and counts up; if it would pass 4,095, or
/// the clock goes back, the generator draws new last bits and starts again. Across devices and
/// launches two ids can only meet if two generators drew the same 62 bits *and* made an id in the
/// same millisecond with the same counter: with 10¹¹ generators over an app's life, about 10³
/// pairs share their bits, and each pair would also have to be running in the same millisecond
/// and draw the same 11-bit start there.
///
/// The random bits come from xoshiro256**, seeded from the system's secure generator, because a
/// system call per id would dominate the log call. Ids are not secrets: nothing is authorised by
/// knowing one.
///
/// Not thread-safe: it lives inside the RequestManager's pending-queue lock.
struct EventIDGenerator {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64
    /// `rand_b`: the variant bits `10`, then 62 random bits.
    private var tail: UInt64 = 0
    private var lastMilliseconds: UInt64 = 0
    private var counter: UInt64 = 0

    init() {
        var system = SystemRandomNumberGenerator()
        repeat {
            s0 = system.next(); s1 = system.next(); s2 = system.next(); s3 = system.next()
        } while s0 | s1 | s2 | s3 == 0  // the all-zero state is the one xoshiro cannot leave
        drawTail()
    }

    private mutating func next() -> UInt64 {
        let result = (s1 &* 5).rotatedLeft(by: 7) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = s3.rotatedLeft(by: 45)
        return result
    }

    private mutating func drawTail() {
        tail = 0x8000_0000_0000_0000 | (next() >> 2)
    }

    mutating func make(milliseconds: Int64) -> UUID {
        let ms = UInt64(max(0, milliseconds)) & 0xFFFF_FFFF_FFFF
        if ms == lastMilliseconds, counter < 0xFFF {
            counter += 1
        } else {
            // A counter that would overflow, or a clock that went back, could repeat an id made
            // before: new last bits make that impossible.
            if ms <= lastMilliseconds { drawTail() }
            lastMilliseconds = ms
            counter = next() >> 53  // below 2,048: room to count up in a busy millisecond
        }
        let b = tail
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: ms >> 40), UInt8(truncatingIfNeeded: ms >> 32),
            UInt8(truncatingIfNeeded: ms >> 24), UInt8(truncatingIfNeeded: ms >> 16),
            UInt8(truncatingIfNeeded: ms >> 8), UInt8(truncatingIfNeeded: ms),
            0x70 | UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter),  // version 7
            UInt8(truncatingIfNeeded: b >> 56), UInt8(truncatingIfNeeded: b >> 48),  // variant 10
            UInt8(truncatingIfNeeded: b >> 40), UInt8(truncatingIfNeeded: b >> 32),
            UInt8(truncatingIfNeeded: b >> 24), UInt8(truncatingIfNeeded: b >> 16),
            UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b)
        ))
    }
}

extension UInt64 {
    @inline(__always)
    func rotatedLeft(by amount: UInt64) -> UInt64 { (self << amount) | (self >> (64 - amount)) }
}
