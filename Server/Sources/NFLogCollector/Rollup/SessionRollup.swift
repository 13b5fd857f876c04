/// The sessions' durations as rollup rows (`session_hours`): per hour of the session's start
/// (device time) and its app version, the sessions of each ``DurationBucket`` and the exact sum
/// of their durations.
///
/// A session lasts from its start to its last suspension; one never suspended, or suspended
/// before it started (a device's clock), is not counted. Its end only grows as batches list it,
/// so each store, as a batch lists a session, takes its row out of the bucket it was in and adds
/// it to the one it is in now (``change(from:to:)``).
struct SessionRollup: Sendable, Equatable {
    struct Key: Hashable, Sendable {
        let hour: Int64
        let appVersion: String
        let bucket: Int64
    }

    struct Counts: Equatable, Sendable {
        var sessions: Int64 = 0
        /// The durations' sum in microseconds, saturating at Int64's bounds (the times are the
        /// client's).
        var micros: Int64 = 0
    }

    /// A session as stored: its start, its last suspension, its context's app version.
    struct Session: Equatable, Sendable {
        let started: Int64
        let ended: Int64?
        let appVersion: String
    }

    private(set) var rows: [Key: Counts] = [:]

    var isEmpty: Bool { rows.isEmpty }

    mutating func add(_ key: Key, _ counts: Counts) {
        var row = rows[key] ?? Counts()
        row.sessions += counts.sessions
        row.micros = Self.saturating(row.micros, counts.micros)
        rows[key] = row == Counts() ? nil : row
    }

    mutating func add(_ other: Self) {
        for (key, counts) in other.rows { add(key, counts) }
    }

    /// Adds (`sign` 1) or takes back (−1) a session, if it counts.
    mutating func add(_ session: Session, sign: Int64) {
        guard let ended = session.ended else { return }
        let (duration, overflow) = ended.subtractingReportingOverflow(session.started)
        guard !overflow, duration >= 0 else { return }
        let (micros, big) = duration.multipliedReportingOverflow(by: 1_000)
        add(Key(hour: session.started / HourlyRollup.hourMilliseconds, appVersion: session.appVersion,
                bucket: DurationBucket.key(Double(duration))),
            Counts(sessions: sign, micros: big ? (sign > 0 ? .max : .min) : micros * sign))
    }

    /// What a batch changed in a stored session: `old` (nil: new) out, `new` in.
    mutating func change(from old: Session?, to new: Session) {
        guard old != new else { return }
        if let old { add(old, sign: -1) }
        add(new, sign: 1)
    }

    /// A session's end once a batch lists it with `listed`: the latest suspension seen wins
    /// (both stores' upserts keep the same).
    static func ended(stored: Int64?, listed: Int64?) -> Int64? {
        guard let listed else { return stored }
        guard let stored else { return listed }
        return max(stored, listed)
    }

    /// The summary of every row's durations (rows for one range and app version).
    var summary: DurationSummary {
        var buckets: [Int64: Int64] = [:]
        var count: Int64 = 0
        var micros: Int64 = 0
        for (key, counts) in rows {
            buckets[key.bucket, default: 0] += counts.sessions
            count += counts.sessions
            micros = Self.saturating(micros, counts.micros)
        }
        return DurationSummary(buckets: buckets, count: count, microseconds: micros)
    }

    private static func saturating(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }
}
