import NFLogger
import Dispatch

/// One label's token bucket and drop count, shared by every handler made for that label.
final class LabelLimiter: Sendable {
    let label: String
    private let rate: LabelRateLimit
    private let state: Lock<State>

    struct State {
        var tokens: Double
        var refilledAt: UInt64
        var dropped = 0
    }

    init(label: String, rate: LabelRateLimit) {
        self.label = label
        self.rate = rate
        state = Lock(State(tokens: rate.burst, refilledAt: DispatchTime.now().uptimeNanoseconds))
    }

    /// Takes a token, or counts a drop and says no.
    func admit() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        let rate = self.rate
        return state.withLock { state in
            if now > state.refilledAt {
                state.tokens = min(rate.burst, state.tokens + Double(now - state.refilledAt) * rate.perSecond / 1e9)
                state.refilledAt = now
            }
            if state.tokens >= 1 {
                state.tokens -= 1
                return true
            }
            state.dropped += 1
            return false
        }
    }

    /// Counts a record dropped for another reason (the policy, recursion).
    func countDrop() {
        state.withLock { $0.dropped += 1 }
    }

    var dropped: Int { state.withLock { $0.dropped } }
}
