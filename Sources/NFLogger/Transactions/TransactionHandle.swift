public import Foundation

/// A use case in progress ("sign up", "check out"): a span of type `usecase` whose id is the
/// transaction id, the events and spans logged against it, and the W3C `traceparent` that
/// carries it to the app's own backend.
///
/// ```swift
/// let signup = logger.beginTransaction(name: "form.signup")
/// signup.logEvent(name: "form.field", parameters: ["field": "email"])
/// var request = URLRequest(url: url)
/// for (name, value) in signup.propagationHeaders(for: url) { request.setValue(value, forHTTPHeaderField: name) }
/// signup.end(outcome: .completed)
/// ```
///
/// Logging to it after it ended, or ending it twice, completes `.failed` and changes nothing.
/// Left open by a crash, it is closed as abandoned, as spans are.
public final class TransactionHandle: Sendable {
    /// The transaction id: its span's uuid, and the W3C trace id of its requests.
    public var id: UUID { span.id }
    /// The use case's name.
    public var name: String { span.name }
    /// Where events logged against it belong: this transaction, its own span.
    public var context: TransactionContext { TransactionContext(transactionID: id, parentSpanID: TransactionContext.spanID(of: id)) }
    private let span: SpanHandle
    private let ended = Lock(false)

    init(span: SpanHandle) {
        self.span = span
    }

    var logger: NFLogger { span.logger }

    /// Logs a point event in this transaction (see ``NFLogger/logEvent(name:type:parameters:in:completion:)``).
    public func logEvent(name: String, type: String = "event", parameters: LogParameters = [:], completion: LogCompletion? = nil) {
        if let refusal = refusal { return logger.completions.finish(refusal, completion) }
        logger.logEvent(name: name, type: type, parameters: parameters, in: context, completion: completion)
    }

    /// Starts a span in this transaction: a request to the backend, a step of the form. Its
    /// ``SpanHandle/propagationHeaders(for:)`` carry the transaction with the span as parent,
    /// so the backend's time is joined to this span.
    @discardableResult
    public func startEvent(name: String, type: String = "event", parameters: LogParameters = [:],
                           completion: LogCompletion? = nil) -> SpanHandle {
        if let refusal = refusal {
            logger.completions.finish(refusal, completion)
            // Ending it answers as its start did (a disabled start ends .disabled, not unknown).
            return SpanHandle(id: UUID(), name: name, start: SpanHandle.Start(refusal: refusal), logger: logger)
        }
        return logger.startEvent(name: name, type: type, parameters: parameters, in: context, completion: completion)
    }

    /// Ends the transaction. `.completed` counts as completed in the collector's report; a
    /// cancelled or failed one counts as abandoned, with its reason. Ending it again completes
    /// ``NFLoggerError/spanAlreadyEnded(_:)``.
    public func end(outcome: TransactionOutcome, parameters: LogParameters = [:], completion: LogCompletion? = nil) {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return logger.completions.finish(.failed(.spanAlreadyEnded(id)), completion) }
        span.end(parameters: parameters.merging(outcome.parameters) { _, outcome in outcome }, completion: completion)
    }

    /// The headers that carry this transaction on a request to `url`: a W3C `traceparent`, if
    /// the URL's host is one of ``Configuration/Propagation/hosts``; none otherwise (trace
    /// headers sent to third parties break CORS preflights and signed URLs).
    public func propagationHeaders(for url: URL) -> [String: String] {
        logger.configuration.propagation.headers(for: url, context: context)
    }

    /// Why a call against this transaction is refused: its start was (with the same answer), or
    /// it ended.
    private var refusal: LogStatus? {
        switch span.start {
        case .started: break
        case .filtered(let reason): return .filtered(reason)
        case .disabled: return .disabled
        case .notStored: return .failed(.unknownSpan(id))
        }
        return ended.withLock { $0 } ? .failed(.transactionEnded(id)) : nil
    }
}
