import Logging
import Synchronization

/// Logs a recurring problem at most once per interval for each key, saying how many times it
/// happened since the last line: a failing disk, a broken policy file or a crowd of refused
/// connections must be visible in the log without flooding it.
final class ThrottledLog: Sendable {
    private struct Entry {
        var lastLogged: Duration
        var since = 0
    }

    private let interval: Duration
    private let entries = Mutex<[String: Entry]>([:])
    /// Keys come from the operator's files and the server's own states, not from clients; still
    /// bounded, so a bug cannot grow the table without end.
    private static let maxKeys = 1_000

    /// The time, read at each call: the continuous clock, or a test's own.
    private let clock: UploadClock

    init(interval: Duration, clock: UploadClock = .continuous) {
        self.interval = interval
        self.clock = clock
    }

    /// Logs `message` if `key` was not logged within the interval; otherwise counts it.
    func log(_ key: String, level: Logger.Level, logger: Logger, _ message: @autoclosure () -> String) {
        let now = clock.now()
        let occurrences: Int? = entries.withLock { entries in
            if var entry = entries[key], now - entry.lastLogged < interval {
                entry.since += 1
                entries[key] = entry
                return nil
            }
            if entries.count >= Self.maxKeys { entries.removeAll() }
            let since = entries[key]?.since ?? 0
            entries[key] = Entry(lastLogged: now)
            return since + 1
        }
        guard let occurrences else { return }
        logger.log(level: level, "\(message())\(occurrences > 1 ? " (\(occurrences) times since the last report)" : "")")
    }
}
