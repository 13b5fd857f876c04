/// The second key of a two-key advisory lock on a row the collectors share by its natural key
/// (a run, a session): 32 bits of an FNV-1a hash of the key's bytes, which every collector
/// computes alike (Swift's `Hasher` is seeded per process). Two keys with one hash only wait for
/// each other.
struct AdvisoryLockKey {
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    init(app: String) { add(app.utf8) }

    mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }

    var value: Int32 { Int32(truncatingIfNeeded: hash ^ (hash >> 32)) }
}
