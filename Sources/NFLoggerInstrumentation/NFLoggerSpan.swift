import Foundation
public import NFLogger
public import Tracing

/// A span of ``NFLoggerTracer``: an NFLogger span (a root one begins a transaction) whose end
/// carries what the span gathered.
///
/// - Attributes become the end's parameters, bounded as ``NFLogHandler``'s metadata (32 keys,
///   strings cut at 1 KiB, numbers and booleans kept as such, arrays as text).
/// - ``setStatus(_:)`` becomes `status` (`ok`, `error`) and `status_message`; an error status
///   ends a root span's transaction as failed.
/// - ``recordError(_:attributes:at:)`` becomes `error`, `error_type`, `errors` (how many) and the
///   error's attributes as `error.<name>` (the last error's).
/// - ``addEvent(_:)`` logs a point event of type `trace` in the span's transaction at once.
/// - A new ``operationName`` is sent as `operation` at the end (the NFLogger span keeps the
///   name it started with: Hummingbird's `TracingMiddleware` renames its span to the route).
/// - Links are not recorded. The instants passed in are not used: NFLogger stamps start and end
///   with its own clocks.
///
/// A span that is not recording (``isRecording`` false: the policy's `auto.tracing` was off, or
/// the SDK refused the start) takes every call and records nothing.
public final class NFLoggerSpan: Tracing.Span {
    public let context: ServiceContext
    /// Where the span's own events go: its transaction, with the span as parent; `nil` when it
    /// records nothing.
    public let transaction: TransactionContext?
    private let logger: NFLogger
    private let recording: Recording?
    private let state: Lock<State>

    enum Recording: Sendable {
        case span(SpanHandle)
        /// A root: the transaction's own span.
        case transaction(TransactionHandle)
    }

    struct State: Sendable {
        var operationName: String
        var renamed = false
        var attributes: SpanAttributes = [:]
        var status: SpanStatus?
        var error: (description: String, type: String, attributes: SpanAttributes)?
        var errors = 0
        var ended = false
    }

    /// `context` is the parent's; the span's own adds its transaction (a span that records
    /// nothing keeps the parent's, so that its children still join the parent).
    init(operationName: String, context: ServiceContext, logger: NFLogger, recording: Recording?, transaction: TransactionContext?) {
        self.logger = logger
        self.recording = recording
        self.transaction = transaction
        state = Lock(State(operationName: operationName))
        var context = context
        if let transaction { context.nfloggerTransaction = transaction }
        self.context = context
    }

    public var operationName: String {
        get { state.withLock { $0.operationName } }
        set {
            state.withLock { state in
                if state.operationName != newValue { state.renamed = true }
                state.operationName = newValue
            }
        }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }

    public var isRecording: Bool { recording != nil && !state.withLock { $0.ended } }

    public func setStatus(_ status: SpanStatus) {
        state.withLock { $0.status = status }
    }

    public func addEvent(_ event: SpanEvent) {
        guard recording != nil, let transaction else { return }
        var parameters = BoundedParameters(collisionPrefix: "attribute.")
        SpanAttributeFlattener.flatten(event.attributes, prefix: "", into: &parameters)
        logger.logEvent(name: EventNames.make(prefix: "", event.name, fallback: "event"), type: NFLoggerTracer.defaultType,
                        parameters: parameters.result, in: transaction)
    }

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        let description = BoundedParameters.cut(String(describing: error), to: BoundedParameters.maxValueBytes)
        let type = BoundedParameters.cut(String(reflecting: Swift.type(of: error)), to: BoundedParameters.maxValueBytes)
        state.withLock { state in
            state.error = (description, type, attributes)
            state.errors += 1
        }
    }

    public func addLink(_ link: SpanLink) {}

    /// Ends the NFLogger span with the gathered parameters. Only the first end counts.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let gathered: State? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return state
        }
        guard let gathered, let recording else { return }
        var fixed: LogParameters = [:]
        var failure: String?
        if let status = gathered.status {
            switch status.code {
            case .ok: fixed["status"] = "ok"
            case .error:
                fixed["status"] = "error"
                failure = status.message ?? gathered.error?.description ?? "error"
            }
            if let message = status.message { fixed["status_message"] = BoundedParameters.cut(message, to: BoundedParameters.maxValueBytes) }
        }
        if let error = gathered.error {
            fixed["error"] = error.description
            fixed["error_type"] = error.type
            fixed["errors"] = gathered.errors
        }
        if gathered.renamed { fixed["operation"] = BoundedParameters.cut(gathered.operationName, to: BoundedParameters.maxValueBytes) }
        var parameters = BoundedParameters(fixed: fixed, collisionPrefix: "attribute.")
        if let error = gathered.error { SpanAttributeFlattener.flatten(error.attributes, prefix: "error.", into: &parameters) }
        SpanAttributeFlattener.flatten(gathered.attributes, prefix: "", into: &parameters)
        switch recording {
        case .span(let span):
            span.end(parameters: parameters.result)
        case .transaction(let transaction):
            transaction.end(outcome: failure.map { .failed(reason: BoundedParameters.cut($0, to: BoundedParameters.maxValueBytes)) } ?? .completed,
                            parameters: parameters.result)
        }
    }
}
