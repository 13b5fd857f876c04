public import Foundation

/// Somewhere recorded events go, chosen by a tag pattern over event names (Puree's and fluentd's
/// routing). Every output is one of two kinds, and each promises something different:
///
/// - A ``DurableOutput`` (and ``CollectorOutput``) has its delivery tracked in SQLite: an event
///   it matched stays on the device until it has it (or the rolling database prunes it), with its
///   own batches, backoff and quarantine. A sink that de-duplicates by event id (a collector) gets
///   each event exactly once.
/// - A ``BestEffortOutput`` is handed each event once, after the write that recorded it commits.
///   Nothing is retried and nothing is kept for it: a crash, a full buffer or a thrown error
///   loses what it did not take.
///
/// The collector the configuration names (``Configuration/uploadURL``) is the first durable
/// output, with the id `collector` and the pattern ``Configuration/collectorPattern``. A policy
/// switches outputs off and on by id (`outputs.disabled`); see <doc:FiltersAndOutputs>.
public protocol Output: Sendable {
    /// Names the output in the database, in diagnostics and in the policy's `outputs.disabled`:
    /// 1–64 characters from `a`–`z`, `0`–`9`, `_`, `-` and `.`. Keep it stable across releases:
    /// what a durable output is owed is kept under its id.
    var id: String { get }
    /// The event names it takes, as a tag pattern (see ``EventRules``): `**` for every event.
    var pattern: String { get }
}

/// An output whose delivery the logger tracks in SQLite, per output: an event it matched is
/// deleted from the device only when every durable output that matched it has confirmed it.
///
/// ``deliver(_:)`` is called off the logger's queue, for one batch at a time per output. Return
/// once the batch is safely wherever it goes (written and synced, acknowledged): only then are
/// its events released. Throw ``OutputRefusal`` when the batch can never be taken as it is: the
/// logger halves it, and sets a single refused event aside in quarantine. Throw anything else for
/// a failure that may pass: the same batch (same ``OutputBatch/id``, same events) is delivered
/// again after a backoff, also after a crash, so a sink that keeps each event id once receives
/// every event exactly once.
public protocol DurableOutput: Output {
    func deliver(_ batch: OutputBatch) async throws
}

/// An output handed each recorded event once, after it is committed, on a serial queue of its
/// own: never on the caller's thread nor on the logger's queue. Nothing is retried or kept.
public protocol BestEffortOutput: Output {
    func emit(_ events: [OutputEvent])
}

/// What a ``DurableOutput`` throws for a batch it will never take as it is.
public struct OutputRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why, kept with the quarantined event.
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { "refused: \(reason)" }
}

/// Events on their way to a ``DurableOutput``.
public struct OutputBatch: Sendable {
    /// The same for every delivery of the same batch, also after a crash.
    public let id: UUID
    /// Oldest first.
    public let events: [OutputEvent]
    /// The batch as docs/PROTOCOL.md's request body (uncompressed JSON): the context, the
    /// sessions and the events, as a collector receives them.
    public let json: Data
}

/// One recorded event, as an output receives it.
public struct OutputEvent: Sendable {
    /// What was recorded.
    public enum Kind: String, Sendable {
        /// A point event.
        case point
        /// A span (for a ``DurableOutput``, once it has ended; a ``BestEffortOutput`` is handed its
        /// start).
        case span
        /// An aggregate that events matching a policy's `rules.aggregate` were folded into.
        case aggregate
    }

    /// The event's id (`uuid` on the wire): the key a sink de-duplicates by.
    public let id: UUID
    public let kind: Kind
    public let name: String
    public let type: String
    /// A point event's time, or a span's start.
    public let timestamp: Date
    /// The event as one object of docs/PROTOCOL.md's `events` (or `aggregates`) array, as JSON
    /// text on one line.
    public let json: String
}
