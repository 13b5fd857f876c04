public import NFLogger
public import Tracing

/// The NFLogger transaction a `ServiceContext` carries: the span ``NFLoggerTracer`` started (its
/// NFLogger span's context), a remote parent its `extract` read from a `traceparent`, or what
/// `NFLoggerMiddleware` put there for a request. Spans started in the context are its children,
/// and ``NFLogHandler`` logs records made in it into it.
enum TransactionContextKey: ServiceContextKey {
    typealias Value = TransactionContext
    static var nameOverride: String? { "nflogger.transaction" }
}

extension ServiceContext {
    /// The NFLogger transaction this context is in, if any: where ``NFLoggerTracer`` starts
    /// child spans and where ``NFLogHandler`` logs records. Set it to join code that runs in the
    /// context to a transaction read elsewhere (a message queue's headers, for instance).
    public var nfloggerTransaction: TransactionContext? {
        get { self[TransactionContextKey.self] }
        set { self[TransactionContextKey.self] = newValue }
    }
}
