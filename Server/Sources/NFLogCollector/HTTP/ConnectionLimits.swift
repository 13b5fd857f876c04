#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one connection may cost the collector: a server on the internet meets clients that
/// open connections and send nothing, send a header a byte a second, or start a body and stall.
package struct ConnectionLimits: Sendable, Equatable {
    /// Connections open at once; past it a new connection is closed as soon as it is accepted
    /// (not queued), and that is logged once a minute with a count. Default: the process's
    /// descriptor limit less 256 for the database, logs and outgoing sockets, so the limit, not
    /// the descriptor table, is what runs out.
    package var maxConnections = ConnectionLimits.defaultMaxConnections
    /// How long a connection may go without a complete request head: from when it opened, or
    /// from the end of the previous response. It covers a connection left idle and a head sent
    /// slowly (slowloris) alike. Default: 30 s.
    package var requestHeadTimeout: Duration = .seconds(30)
    /// A body must arrive at least this fast, judged window by window: its first `bodyGrace`, and
    /// each `bodyRateWindow` after it, must bring this rate times the window's length, or the rest
    /// of the body; a body that falls short is closed at the end of that window. Default: 16 KiB/s
    /// (160 KiB in each 10 s window), far below any network a phone uploads over, yet a client
    /// that stops sending is closed within two windows whatever length it declared.
    package var minBodyBytesPerSecond = 16 * 1024
    /// The first window of a body (see ``minBodyBytesPerSecond``): room for a slow start. Default: 10 s.
    package var bodyGrace: Duration = .seconds(10)
    /// Each later window of a body (see ``minBodyBytesPerSecond``). Also how far ahead the
    /// in-flight budget looks when it judges an upload slow (``CollectorConfiguration/maxInflightBodyBytes``).
    /// Default: 10 s.
    package var bodyRateWindow: Duration = .seconds(10)

    package init() {}

    /// The descriptor limit (RLIMIT_NOFILE, soft) less 256, at least 64.
    package static var defaultMaxConnections: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 768 }
        return max(64, Int(clamping: limit.rlim_cur) - 256)
    }

    /// Raises the soft descriptor limit to the hard one, as servers do at start: the default of
    /// 1,024 on many systems is far below what a collector faces. Returns the new soft limit.
    @discardableResult
    package static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
