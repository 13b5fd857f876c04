public import Foundation

extension RecordingTransport {
    /// Waits until ``events`` holds at least `count` events, and returns them: no sleeps in
    /// tests. Uploads follow each recorded event with the configuration of
    /// ``configuration(databaseDirectory:appID:appVersion:)``; after a refusal, the SDK's retry
    /// comes after its backoff.
    ///
    /// - Throws: ``WaitTimeout`` after `timeout` seconds, naming what did arrive;
    ///   `CancellationError` if the task is cancelled.
    @discardableResult
    public func waitForEvents(count: Int, timeout: TimeInterval = 5) async throws -> [RecordedEvent] {
        try await wait(timeout: timeout, until: { $0.events.count >= count }) { state in
            "\(count) events; \(state.events.count) arrived (\(state.events.map(\.name).joined(separator: ", ")))"
        }
        return events
    }

    /// Waits until ``batches`` holds at least `count` upload attempts, accepted or not, and
    /// returns them.
    ///
    /// - Throws: ``WaitTimeout`` after `timeout` seconds; `CancellationError` if the task is
    ///   cancelled.
    @discardableResult
    public func waitForBatches(count: Int, timeout: TimeInterval = 5) async throws -> [RecordedBatch] {
        try await wait(timeout: timeout, until: { $0.batches.count >= count }) { state in
            "\(count) uploads; \(state.batches.count) arrived"
        }
        return batches
    }

    /// What ``waitForEvents(count:timeout:)`` and ``waitForBatches(count:timeout:)`` throw when
    /// the time is up.
    public struct WaitTimeout: Error, Sendable, CustomStringConvertible {
        /// What was awaited and what had arrived, in words.
        public let description: String
    }

    /// A task waiting for the state to satisfy a condition.
    struct Waiter {
        let id: Int
        /// Checked under the lock, after each upload: code of this file's, never the app's.
        let isSatisfied: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private func wait(timeout: TimeInterval, until isSatisfied: @escaping @Sendable (State) -> Bool,
                      describe: @escaping @Sendable (State) -> String) async throws {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let waiting = state.withLock { state in
                    if isSatisfied(state) { return false }
                    state.waiters.append(Waiter(id: id, isSatisfied: isSatisfied, continuation: continuation))
                    return true
                }
                guard waiting else { return continuation.resume() }
                if Task.isCancelled { return finish(id) { _ in CancellationError() } }
                Task { [weak self] in
                    try? await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1e9))
                    self?.finish(id) { state in
                        WaitTimeout(description: "waited \(timeout) s for \(describe(state))")
                    }
                }
            }
        } onCancel: {
            finish(id) { _ in CancellationError() }
        }
    }

    /// Fails the waiter `id` with the error `error` builds from the state, unless it is gone
    /// (satisfied, timed out or cancelled already).
    private func finish(_ id: Int, with error: (State) -> any Error) {
        let finished = state.withLock { state -> (Waiter, any Error)? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return (state.waiters.remove(at: index), error(state))
        }
        if let (waiter, error) = finished { waiter.continuation.resume(throwing: error) }
    }
}

extension RecordingTransport.State {
    /// Removes and returns the waiters whose condition now holds, to be resumed outside the lock.
    mutating func takeSatisfiedWaiters() -> [RecordingTransport.Waiter] {
        guard !waiters.isEmpty else { return [] }
        let satisfied = waiters.filter { $0.isSatisfied(self) }
        waiters.removeAll { waiter in satisfied.contains { $0.id == waiter.id } }
        return satisfied
    }
}
