import Synchronization

/// Whether the event store can write, as the uploads found it: a failed write makes `/health`
/// say "degraded" (503, with the reason) until a write succeeds again. That is an upload's, or,
/// once no upload has tried for `probeInterval`, the store's own probe (a batch's worth of
/// pages), made at most every `probeInterval` (so `/health`, which needs no key, cannot make the
/// store write in a loop).
final class StoreHealth: Sendable {
    private struct State {
        var failure: String?
        /// The last write tried, an upload's or a probe's.
        var lastAttempt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let probeInterval: Duration

    init(probeInterval: Duration = .seconds(2)) {
        self.probeInterval = probeInterval
    }

    func succeeded() {
        state.withLock { $0 = State(failure: nil, lastAttempt: .now) }
    }

    func failed(_ reason: String) {
        state.withLock { $0 = State(failure: reason, lastAttempt: .now) }
    }

    /// Why the store cannot write, or `nil` when it can. While degraded, and with no write tried
    /// for `probeInterval`, tries `probe` first.
    func failure(probing probe: () async throws -> Void) async -> String? {
        let now = ContinuousClock.now
        let shouldProbe = state.withLock { state -> Bool in
            guard state.failure != nil else { return false }
            if let last = state.lastAttempt, now - last < probeInterval { return false }
            state.lastAttempt = now
            return true
        }
        if shouldProbe {
            do {
                try await probe()
                succeeded()
            } catch {
                failed("the event store cannot write: \(error)")
            }
        }
        return state.withLock { $0.failure }
    }
}
