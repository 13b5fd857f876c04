/// Deterministic sampling: whether this install is in the sample for this event name.
///
/// The decision is a hash of the install id and the name, mapped to [0, 1) and compared with the
/// rate, so one device is consistently in or out for a given event (across restarts too), and
/// across a fleet the share that is in matches the rate.
enum Sampling {
    /// FNV-1a, 64 bits: stable across processes and platforms, unlike Swift's seeded `Hasher`.
    static func fnv1a(_ bytes: some Sequence<UInt8>, seed: UInt64 = 0xCBF2_9CE4_8422_2325) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// The hash of an install id, computed once per logger.
    static func seed(installID: String) -> UInt64 {
        fnv1a(installID.utf8)
    }

    /// A uniform value in [0, 1) for this install and name.
    static func position(seed: UInt64, name: String) -> Double {
        var z = fnv1a(name.utf8, seed: seed ^ 0x9E37_79B9_7F4A_7C15)
        // SplitMix64's finaliser spreads FNV's weak low bits over the whole word.
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }

    static func isSampledIn(seed: UInt64, name: String, rate: Double) -> Bool {
        rate >= 1 || (rate > 0 && position(seed: seed, name: name) < rate)
    }
}
