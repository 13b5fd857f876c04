public import Logging
public import NFLogger

/// Where the ``NFLogHandler``s of one installation send their records: the logger, the lowest
/// level recorded, and each label's rate limit and drop count.
///
/// ```swift
/// let sink = NFLogSink(logger: nflogger)
/// LoggingSystem.bootstrap { label in sink.makeHandler(label: label) }
/// ```
///
/// A label keeps its bucket and its count for the sink's lifetime, whichever handler (or copy of
/// one) logs. Past ``maxLabels`` distinct labels, later labels share one bucket and one count,
/// listed under ``overflowLabel``, so that labels made per request cannot grow memory.
public final class NFLogSink: Sendable {
    /// The logger the records go to.
    public let logger: NFLogger
    /// The lowest level recorded by the handlers it makes (their initial `logLevel`). Default: `.info`.
    public let level: Logger.Level
    /// Each label's rate limit.
    public let rateLimit: LabelRateLimit
    /// How many labels get a bucket and a count of their own.
    public static let maxLabels = 1_024
    /// The label the drops of labels past ``maxLabels`` are counted under.
    public static let overflowLabel = "*"

    /// Each label's limiter. Only read and written inside `withLock`; bodies do not call out.
    private let limiters = Lock<[String: LabelLimiter]>([:])

    /// A sink for `logger`, recording at `level` and above, each label at most `rateLimit`.
    public init(logger: NFLogger, level: Logger.Level = .info, rateLimit: LabelRateLimit = .default) {
        self.logger = logger
        self.level = level
        self.rateLimit = rateLimit
    }

    /// A handler for `label`, for `LoggingSystem.bootstrap` or `Logger(label:factory:)`.
    public func makeHandler(label: String) -> NFLogHandler {
        NFLogHandler(label: label, sink: self)
    }

    /// How many records of `label` were dropped: over the rate limit, while the policy's
    /// `auto.log` was off, or logged from inside the SDK.
    public func droppedRecords(label: String) -> Int {
        limiters.withLock { $0[label] }?.dropped ?? 0
    }

    /// Every label's drop count, labels without drops left out.
    public var droppedRecords: [String: Int] {
        let all = limiters.withLock { Array($0.values) }
        var counts: [String: Int] = [:]
        for limiter in all {
            let dropped = limiter.dropped
            if dropped > 0 { counts[limiter.label] = dropped }
        }
        return counts
    }

    /// The limiter of `label`, made at its first use.
    func limiter(for label: String) -> LabelLimiter {
        let rate = rateLimit
        return limiters.withLock { limiters in
            if let existing = limiters[label] { return existing }
            let key = limiters.count < Self.maxLabels ? label : Self.overflowLabel
            if let overflow = limiters[key] { return overflow }
            let made = LabelLimiter(label: key, rate: rate)
            limiters[key] = made
            return made
        }
    }
}
