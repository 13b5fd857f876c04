import Synchronization

/// The bytes of upload bodies the collector holds at once, across all connections
/// (`--max-inflight-bytes`): an upload reserves its declared length (or the largest allowed)
/// before its body is read, and gives it back when it is answered. When the budget is spent an
/// upload waits a moment for room, then is refused with 503 and `Retry-After`: a crowd of
/// clients that send most of a large body and stop costs this much memory, not one body each.
final class BodyBudget: Sendable {
    let capacity: Int
    private let used = Mutex(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    var inUse: Int { used.withLock { $0 } }

    /// Takes `bytes` of the budget, waiting up to `patience` for room; false if there was none.
    func reserve(_ bytes: Int, patience: Duration) async -> Bool {
        let deadline = ContinuousClock.now + patience
        while true {
            let taken = used.withLock { used -> Bool in
                // One body larger than the whole budget still goes through alone.
                guard used == 0 || used + bytes <= capacity else { return false }
                used += bytes
                return true
            }
            if taken { return true }
            guard ContinuousClock.now < deadline else { return false }
            // Room comes back as uploads finish (milliseconds each); polling keeps no waiter list
            // that a cancelled request could leave behind.
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    func release(_ bytes: Int) {
        used.withLock { $0 -= bytes }
    }
}
