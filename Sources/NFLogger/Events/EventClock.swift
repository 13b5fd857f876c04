import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two clocks an event is stamped with: wall time for "when", a monotonic clock for "how long".
///
/// A protocol so tests can drive time by hand; the SDK uses ``SystemEventClock``.
protocol EventClock: Sendable {
    /// Milliseconds since the Unix epoch.
    func wallMilliseconds() -> Int64
    /// Nanoseconds on a clock that never goes backwards within this process.
    func monotonicNanoseconds() -> UInt64
    /// Runs `handler` once on `queue`, `nanoseconds` from now on the monotonic clock, unless the
    /// returned work is cancelled first. The default is a Dispatch timer; a test clock fires it
    /// when the test moves time past it.
    func schedule(after nanoseconds: UInt64, leeway: DispatchTimeInterval, on queue: DispatchQueue,
                  _ handler: @escaping @Sendable () -> Void) -> any ScheduledWork
}

/// Work a clock will run later, until cancelled.
protocol ScheduledWork: Sendable {
    func cancel()
}

extension EventClock {
    func schedule(after nanoseconds: UInt64, leeway: DispatchTimeInterval, on queue: DispatchQueue,
                  _ handler: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds)), leeway: leeway)
        timer.setEventHandler(handler: handler)
        timer.resume()
        return DispatchScheduledWork(timer: timer)
    }
}

/// A one-shot Dispatch timer as ``ScheduledWork``.
/// Invariant (why it may be `@unchecked Sendable`): it only holds the timer, and a Dispatch
/// source may be cancelled from any thread.
private struct DispatchScheduledWork: ScheduledWork, @unchecked Sendable {
    let timer: any DispatchSourceTimer
    func cancel() { timer.cancel() }
}

struct SystemEventClock: EventClock {
    func wallMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }

    func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// Identifies this process's monotonic clock: a span's duration is taken from the monotonic clock
/// only when it starts and ends under the same epoch, and from wall time otherwise (a restart).
let processClockEpoch = Int64.random(in: 1...Int64.max)
