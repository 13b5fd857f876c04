import Foundation
@_spi(NFLogShared) public import NFLogger
@_spi(NFLogShared) import NFLogSupport
public import Tracing

/// A swift-distributed-tracing `Tracer` whose spans are NFLogger spans, in NFLogger transactions.
///
/// `startSpan` starts an NFLogger span named after the operation (made into valid name parts),
/// of type `server` or `client` for those span kinds and `trace` otherwise:
/// - in the transaction the given `ServiceContext` carries (a span of this tracer, a remote
///   parent read by ``extract(_:into:using:)``, a request of `NFLoggerMiddleware`), as a child of
///   that span;
/// - otherwise as a root: it begins a transaction (``NFLogger/beginTransaction(name:type:parameters:completion:)``),
///   so the trace id is the transaction id, and ending the span ends the transaction (failed if
///   its status is an error).
///
/// ``inject(_:into:using:)`` writes the context's transaction as a W3C `traceparent` into every
/// carrier it is given: it has no notion of first-party hosts. That suits a server calling its
/// own services; an app should instead add ``SpanHandle/propagationHeaders(for:)`` or
/// ``TransactionHandle/propagationHeaders(for:)`` to its requests, which only go to
/// `Configuration.Propagation.hosts`.
///
/// While the policy's `auto.tracing` is `false`, spans are valid objects that record nothing
/// (counted in ``droppedSpans``).
///
/// ```swift
/// InstrumentationSystem.bootstrap(NFLoggerTracer(logger: nflogger))
/// try await withSpan("db.query") { span in
///     span.attributes["db.table"] = "users"
///     …
/// }
/// ```
public final class NFLoggerTracer: Tracer {
    /// The event type of spans of kinds other than server and client, and of span events.
    public static let defaultType = "trace"
    /// The W3C header ``inject(_:into:using:)`` writes and ``extract(_:into:using:)`` reads.
    public static let traceparentHeader = "traceparent"

    /// The logger the spans go to.
    public let logger: NFLogger
    /// How many spans recorded nothing because the policy's `auto.tracing` was off. Only read
    /// and written inside `withLock`.
    private let dropped = Lock(0)

    /// A tracer whose spans go to `logger`.
    public init(logger: NFLogger) {
        self.logger = logger
    }

    /// How many spans recorded nothing because the policy's `auto.tracing` was off.
    public var droppedSpans: Int { dropped.withLock { $0 } }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> NFLoggerSpan {
        let parent = context()
        if !logger.automaticSources.tracing {
            dropped.withLock { $0 += 1 }
            return NFLoggerSpan(operationName: operationName, context: parent, logger: logger, recording: nil, transaction: nil)
        }
        let name = EventNames.make(prefix: "", operationName, fallback: "span")
        let type = Self.type(of: kind)
        let recording: NFLoggerSpan.Recording
        let transaction: TransactionContext?
        if let parentTransaction = parent.nfloggerTransaction {
            let span = logger.startEvent(name: name, type: type, in: parentTransaction)
            recording = .span(span)
            transaction = span.context
        } else {
            let root = logger.beginTransaction(name: name, type: type)
            recording = .transaction(root)
            transaction = root.context
        }
        return NFLoggerSpan(operationName: operationName, context: parent, logger: logger, recording: recording, transaction: transaction)
    }

    /// Writes `traceparent` for the context's transaction (the span of this tracer it belongs
    /// to, or the remote parent it carries) into `carrier`; nothing outside a transaction.
    public func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        guard let transaction = context.nfloggerTransaction else { return }
        injector.inject(transaction.traceparent, forKey: Self.traceparentHeader, into: &carrier)
    }

    /// Reads a W3C `traceparent` from `carrier` into the context: spans started in it are
    /// children of the remote span. A missing or malformed header changes nothing.
    public func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        guard let header = extractor.extract(key: Self.traceparentHeader, from: carrier),
              let transaction = TransactionContext(traceparent: header.trimmingCharacters(in: .whitespaces)) else { return }
        context.nfloggerTransaction = transaction
    }

    /// Does nothing: NFLogger stores every span as it ends and uploads on its own schedule
    /// (``NFLogger/flush(completion:)`` uploads now).
    public func forceFlush() {}

    static func type(of kind: SpanKind) -> String {
        switch kind {
        case .server: "server"
        case .client: "client"
        default: defaultType
        }
    }
}
