public import Foundation

/// A started span. End it once with ``end(parameters:completion:)``.
///
/// If the start was not recorded (the SDK was disabled, the rules filtered it, or it failed),
/// ending the handle completes with the same answer and stores nothing.
public struct SpanHandle: Sendable {
    /// The span's id: pass it to ``NFLogger/endEvent(id:parameters:completion:)`` if you cannot
    /// keep the handle.
    public let id: UUID
    /// The span's name.
    public let name: String
    let start: Start
    let logger: NFLogger
    /// The transaction it was started in, if any.
    let transaction: UUID?

    init(id: UUID, name: String, start: Start, logger: NFLogger, transaction: UUID? = nil) {
        self.id = id
        self.name = name
        self.start = start
        self.logger = logger
        self.transaction = transaction
    }

    /// Where events under this span belong, if it was started in a transaction: the
    /// transaction, with this span as parent. `nil` for a span outside any transaction.
    public var context: TransactionContext? {
        transaction.map { TransactionContext(transactionID: $0, parentSpanID: TransactionContext.spanID(of: id)) }
    }

    /// The headers that carry the transaction on a request made under this span (a W3C
    /// `traceparent` naming this span as parent), if the span is in a transaction and `url`'s
    /// host is one of ``Configuration/Propagation/hosts``. The collector then joins the
    /// backend's time to this span: the request's network round trip and server time.
    public func propagationHeaders(for url: URL) -> [String: String] {
        guard let context else { return [:] }
        return logger.configuration.propagation.headers(for: url, context: context)
    }

    enum Start: Sendable {
        case started
        case filtered(FilterReason)
        case disabled
        /// The start failed (bad input, backpressure): there is no span to end.
        case notStored

        init(refusal: LogStatus) {
            switch refusal {
            case .filtered(let reason): self = .filtered(reason)
            case .disabled: self = .disabled
            case .recorded, .failed: self = .notStored
            }
        }
    }

    /// Ends the span. Parameters follow the rules of
    /// ``NFLogger/logEvent(name:type:parameters:in:completion:)`` and are kept beside the start's.
    public func end(parameters: LogParameters = [:], completion: LogCompletion? = nil) {
        switch start {
        case .started: logger.endEvent(id: id, parameters: parameters, completion: completion)
        case .filtered(let reason): logger.completions.finish(.filtered(reason), completion)
        case .disabled: logger.completions.finish(.disabled, completion)
        case .notStored: logger.completions.finish(.failed(.unknownSpan(id)), completion)
        }
    }
}
