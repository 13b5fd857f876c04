@_spi(NFLogShared) import NFLogSupport
import Synchronization

/// Decides each request's fault from the seed and keeps the counts.
///
/// Invariant: all mutable state is inside the mutex; each call takes it once, briefly, and
/// never awaits while holding it.
final class FaultDecider: Sendable {
    private struct State {
        var random: SeededRandom
        var counts = FaultProxyCounts()
        /// Requests arriving before this (monotonic nanoseconds, less the grace) ignored a `Retry-After`.
        var notBefore: UInt64 = 0
        /// When the last `Retry-After` was given: a request arriving within the grace after it may
        /// have left the client before the answer reached it.
        var givenAt: UInt64 = 0
        /// Requests that arrived inside the current window after the grace: the first
        /// `retryAfterInFlight` of them may have been on their way already.
        var arrivedInWindow = 0
    }

    private let configuration: FaultProxyConfiguration
    private let state: Mutex<State>

    init(_ configuration: FaultProxyConfiguration) {
        self.configuration = configuration
        state = Mutex(State(random: SeededRandom(seed: configuration.seed)))
    }

    var counts: FaultProxyCounts { state.withLock { $0.counts } }

    func connectionAccepted() { state.withLock { $0.counts.connections += 1 } }

    /// Counts a request head and decides its fault (`nil`: passed through untouched).
    func decide(method: String, now: UInt64) -> FaultKind? {
        let grace = UInt64(max(0, configuration.retryAfterGrace.nanoseconds))
        return state.withLock { state in
            state.counts.requests += 1
            if now > state.givenAt + grace && now < state.notBefore {
                state.arrivedInWindow += 1
                if state.arrivedInWindow > configuration.retryAfterInFlight { state.counts.earlyRequests += 1 }
            }
            guard configuration.methods.map({ $0.contains(method) }) ?? true, !configuration.faults.isEmpty else { return nil }
            // Two draws, always both, so the sequence of decisions depends on the seed alone.
            let roll = state.random.unit()
            let pick = state.random.below(configuration.faults.count)
            return roll < configuration.faultRate ? configuration.faults[pick] : nil
        }
    }

    func injected(_ fault: FaultKind) { state.withLock { $0.counts.faults[fault.rawValue, default: 0] += 1 } }
    func forwarded() { state.withLock { $0.counts.forwarded += 1 } }
    func answered() { state.withLock { $0.counts.answered += 1 } }
    func upstreamFailed() { state.withLock { $0.counts.upstreamFailures += 1 } }

    /// A `Retry-After` of `seconds` was given at `now`.
    func retryAfterGiven(seconds: Int, now: UInt64) {
        let grace = UInt64(max(0, configuration.retryAfterGrace.nanoseconds))
        let until = now + UInt64(max(0, seconds)) * 1_000_000_000
        state.withLock { state in
            state.notBefore = max(state.notBefore, until > grace ? until - grace : 0)
            state.givenAt = now
            state.arrivedInWindow = 0
        }
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
