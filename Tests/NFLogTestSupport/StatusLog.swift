import NFLogger
import Synchronization

/// Collects completion statuses from any thread and lets a test wait for a number of them.
public final class StatusLog: Sendable {
    private struct State {
        var statuses: [LogStatus] = []
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    public init() {}

    /// A completion handler that appends to this log.
    public var completion: LogCompletion {
        { status in self.append(status) }
    }

    public func append(_ status: LogStatus) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.statuses.append(status)
            let count = state.statuses.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    public var statuses: [LogStatus] { state.withLock { $0.statuses } }

    /// Waits until at least `count` statuses have arrived.
    public func wait(for count: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.statuses.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}
