import Foundation

// The `async` twin of beginTransaction, as for every other call (NFLogger+Async.swift).
extension NFLogger {
    /// Begins a transaction and waits until its start is committed (or refused).
    nonisolated(nonsending)
    public func beginTransaction(name: String, type: String = "usecase", parameters: LogParameters = [:]) async
        -> (transaction: TransactionHandle, status: LogStatus) {
        await awaitingStart({ beginTransaction(name: name, type: type, parameters: parameters, completion: $0) },
                            orElse: TransactionHandle(span: SpanHandle(id: UUID(), name: name, start: .notStored, logger: self)))
    }
}

extension TransactionHandle {
    /// Logs a point event in this transaction and waits until it is committed (or refused).
    @discardableResult
    nonisolated(nonsending)
    public func logEvent(name: String, type: String = "event", parameters: LogParameters = [:]) async -> LogStatus {
        await withCheckedContinuation { continuation in
            logEvent(name: name, type: type, parameters: parameters) { continuation.resume(returning: $0) }
        }
    }

    /// Starts a span in this transaction and waits until its start is committed (or refused).
    nonisolated(nonsending)
    public func startEvent(name: String, type: String = "event", parameters: LogParameters = [:]) async
        -> (span: SpanHandle, status: LogStatus) {
        await awaitingStart({ startEvent(name: name, type: type, parameters: parameters, completion: $0) },
                            orElse: SpanHandle(id: UUID(), name: name, start: .notStored, logger: logger))
    }

    /// Ends the transaction and waits until the end is committed (or refused).
    @discardableResult
    nonisolated(nonsending)
    public func end(outcome: TransactionOutcome, parameters: LogParameters = [:]) async -> LogStatus {
        await withCheckedContinuation { continuation in
            end(outcome: outcome, parameters: parameters) { continuation.resume(returning: $0) }
        }
    }
}
