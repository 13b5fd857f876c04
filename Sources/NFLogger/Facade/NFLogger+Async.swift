public import Foundation

// The `async` twins: the same path as the completion-handler calls, awaiting the status.
// `nonisolated(nonsending)` keeps them on the caller's actor: no hop before the call is queued.
extension NFLogger {
    /// Logs a point event (in a transaction, if `context` is given) and waits until it is
    /// committed (or refused).
    @discardableResult
    nonisolated(nonsending)
    public func logEvent(name: String, type: String = "event", parameters: LogParameters = [:],
                         in context: TransactionContext? = nil) async -> LogStatus {
        await withCheckedContinuation { continuation in
            logEvent(name: name, type: type, parameters: parameters, in: context) { continuation.resume(returning: $0) }
        }
    }

    /// Starts a span (in a transaction, if `context` is given) and waits until its start is
    /// committed (or refused).
    nonisolated(nonsending)
    public func startEvent(name: String, type: String = "event", parameters: LogParameters = [:],
                           in context: TransactionContext? = nil) async -> (span: SpanHandle, status: LogStatus) {
        await awaitingStart({ startEvent(name: name, type: type, parameters: parameters, in: context, completion: $0) },
                            orElse: SpanHandle(id: UUID(), name: name, start: .notStored, logger: self))
    }

    /// Ends the span with this id and waits until the end is committed (or refused).
    @discardableResult
    nonisolated(nonsending)
    public func endEvent(id: UUID, parameters: LogParameters = [:]) async -> LogStatus {
        await withCheckedContinuation { continuation in
            endEvent(id: id, parameters: parameters) { continuation.resume(returning: $0) }
        }
    }

    /// Sets ``consent`` and waits until it is saved and applied; returns how many held events a
    /// denial deleted (see ``setConsent(_:completion:)``).
    @discardableResult
    nonisolated(nonsending)
    public func setConsent(_ consent: Consent) async -> Int {
        await withCheckedContinuation { continuation in
            setConsent(consent) { continuation.resume(returning: $0) }
        }
    }

    /// A snapshot of what the logger has done and holds.
    nonisolated(nonsending)
    public func diagnostics() async -> Diagnostics {
        await withCheckedContinuation { continuation in
            diagnostics { continuation.resume(returning: $0) }
        }
    }

    /// Writes every call already made and closes the database.
    nonisolated(nonsending)
    public func close() async {
        await withCheckedContinuation { continuation in
            close { continuation.resume() }
        }
    }
}

extension SpanHandle {
    /// Ends the span and waits until the end is committed (or refused).
    @discardableResult
    nonisolated(nonsending)
    public func end(parameters: LogParameters = [:]) async -> LogStatus {
        await withCheckedContinuation { continuation in
            end(parameters: parameters) { continuation.resume(returning: $0) }
        }
    }
}

extension NFLogger {
    /// Writes every call already made, uploads every stored event now, and reports.
    @discardableResult
    nonisolated(nonsending)
    public func flush() async -> FlushResult {
        await withCheckedContinuation { continuation in
            flush { continuation.resume(returning: $0) }
        }
    }
}

extension NFLogger {
    /// Asks the collector for a newer policy now and reports what happened.
    @discardableResult
    nonisolated(nonsending)
    public func refreshPolicy() async -> PolicyUpdate {
        await withCheckedContinuation { continuation in
            refreshPolicy { continuation.resume(returning: $0) }
        }
    }
}

/// The `async` twin of a call that returns a handle and completes later (a span's or a
/// transaction's start): the handle, and the status once the start is settled. The call returns
/// its handle before its completion can run, so `fallback` is never used; it keeps the code free
/// of a force-unwrap.
nonisolated(nonsending)
func awaitingStart<Handle: Sendable>(_ start: (@escaping LogCompletion) -> Handle,
                                     orElse fallback: @autoclosure () -> Handle) async -> (Handle, LogStatus) {
    var handle: Handle?
    let status = await withCheckedContinuation { continuation in
        handle = start { continuation.resume(returning: $0) }
    }
    return (handle ?? fallback(), status)
}
