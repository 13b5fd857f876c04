public import Logging
@_spi(NFLogShared) import NFLogger
@_spi(NFLogShared) import NFLogSupport
import Tracing

/// A swift-log `LogHandler` that turns records into NFLogger point events.
///
/// A record at or above the handler's `logLevel` (the sink's ``NFLogSink/level``, `.info` by
/// default) becomes an event named `log.<label>` (the label made into valid name parts: other
/// characters become `_`, empty parts are dropped, the name is cut at 256 bytes), of type `log`,
/// with the parameters `message`, `level`, `source`, `error` (if the record has one) and the
/// metadata (the handler's, its metadata provider's, then the record's) flattened to strings:
/// nested dictionaries as `key.sub`, at most 32 keys, keys cut at 128 bytes, values at 1 KiB,
/// 16 KiB in all, and `truncated: true` when something was cut. A metadata key that is one of the
/// record's own parameters is prefixed `metadata.`.
///
/// It drops (and counts, ``NFLogSink/droppedRecords(label:)``) a record over the label's rate
/// limit, every record while the policy's `auto.log` is `false`, and a record logged while the
/// handler is itself inside the SDK. It never records the SDK's own log (labels `nflogger` and
/// `nflogger.*`). A record made while a span of ``NFLoggerTracer`` (or a request of
/// `NFLoggerMiddleware`) is the task's `ServiceContext` is logged into that span's transaction.
///
/// ```swift
/// let sink = NFLogSink(logger: nflogger)
/// LoggingSystem.bootstrap { label in sink.makeHandler(label: label) }
/// Logger(label: "com.example.db").warning("slow query", metadata: ["table": "users"])
/// // → event log.com.example.db {message: "slow query", level: "warning", source: …, table: "users"}
/// ```
public struct NFLogHandler: LogHandler {
    /// The event type of the records.
    public static let eventType = "log"

    /// The label the handler was made for.
    public let label: String
    /// The event name its records get: `log.<label>`.
    public let eventName: String
    /// The lowest level it records; records below it never reach the handler.
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let sink: NFLogSink
    private let limiter: LabelLimiter
    /// `nflogger` or `nflogger.*`: the SDK's own log, never recorded.
    private let isSDKLabel: Bool

    /// A handler for `label` that sends its records to `sink` (see ``NFLogSink/makeHandler(label:)``).
    public init(label: String, sink: NFLogSink) {
        self.label = label
        self.sink = sink
        logLevel = sink.level
        eventName = EventNames.make(prefix: "log", label, fallback: "")
        limiter = sink.limiter(for: label)
        isSDKLabel = label == "nflogger" || label.hasPrefix("nflogger.")
        metadataProvider = nil
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// How many of this label's records were dropped (see ``NFLogSink/droppedRecords(label:)``).
    public var droppedRecords: Int { limiter.dropped }

    public func log(event: LogEvent) {
        guard !isSDKLabel, event.level >= logLevel else { return }
        guard !RecursionGuard.isInsideSDK else { return limiter.countDrop() }
        let logger = sink.logger
        if !logger.automaticSources.log { return limiter.countDrop() }
        guard limiter.admit() else { return }
        let transaction = ServiceContext.current?.nfloggerTransaction
        // Building the parameters runs the app's code too (metadata providers, descriptions).
        RecursionGuard.$isInsideSDK.withValue(true) {
            let parameters = parameters(of: event)
            if let transaction {
                logger.logEvent(name: eventName, type: Self.eventType, parameters: parameters, in: transaction)
            } else {
                logger.logEvent(name: eventName, type: Self.eventType, parameters: parameters)
            }
        }
    }

    private func parameters(of event: LogEvent) -> LogParameters {
        var fixed: LogParameters = [
            "message": BoundedParameters.cut(event.message.description, to: 4 * BoundedParameters.maxValueBytes),
            "level": event.level.rawValue,
            "source": BoundedParameters.cut(event.source, to: BoundedParameters.maxKeyBytes),
        ]
        if let error = event.error {
            fixed["error"] = BoundedParameters.cut(String(describing: error), to: BoundedParameters.maxValueBytes)
        }
        var parameters = BoundedParameters(fixed: fixed, collisionPrefix: "metadata.")
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        if let own = event.metadata, !own.isEmpty {
            merged.merge(own) { _, own in own }
        }
        MetadataFlattener.flatten(merged, into: &parameters)
        return parameters.result
    }
}
