public import Foundation

/// Why a logging call failed. Each case says what to fix; none of them means the app should stop.
///
/// New cases may come in any minor release (see <doc:SourceStability>): a `switch` over it
/// needs a `default`.
public enum NFLoggerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The event name breaks the naming rules (see ``NFLogger/logEvent(name:type:parameters:in:completion:)``).
    case invalidName(String, reason: String)
    /// The event type breaks the naming rules.
    case invalidType(String, reason: String)
    /// A parameter is not JSON-compatible. `key` is its path, such as `user.tags[2]`.
    case invalidParameter(key: String, reason: String)
    /// The parameters encode to more bytes than ``Configuration/Limits/maxParametersBytes``.
    case parametersTooLarge(bytes: Int, limit: Int)
    /// More events are waiting for the database than the configured bound; the event was dropped
    /// instead of growing memory. Log less, or raise ``Configuration/Limits/maxPendingEvents``.
    case backpressure(pendingEvents: Int, pendingBytes: Int)
    /// SQLite could not store the event (full disk, read-only file, busy database, …).
    case storage(StorageError)
    /// No span with this id was ever recorded in this database.
    case unknownSpan(UUID)
    /// The span was already ended; the first end stands.
    case spanAlreadyEnded(UUID)
    /// The transaction with this id has ended (``TransactionHandle/end(outcome:parameters:completion:)``):
    /// nothing more is logged against it.
    case transactionEnded(UUID)
    /// The logger was closed with ``NFLogger/close(completion:)``.
    case closed
    /// The ``EventFilter`` with this name threw (`reason` is its error), or returned what cannot
    /// be stored in place of the event (several events for a span start, more than 64 events).
    /// Nothing of the call was stored; fix the filter.
    case filterFailed(filter: String, reason: String)

    public var description: String {
        switch self {
        case .invalidName(let name, let reason): "invalid event name \"\(name)\": \(reason)"
        case .invalidType(let type, let reason): "invalid event type \"\(type)\": \(reason)"
        case .invalidParameter(let key, let reason): "invalid parameter \"\(key)\": \(reason)"
        case .parametersTooLarge(let bytes, let limit):
            "parameters encode to \(bytes) bytes, more than the limit of \(limit)"
        case .backpressure(let events, let bytes):
            "backpressure: \(events) events (\(bytes) bytes) already wait for the database"
        case .storage(let error): "storage: \(error)"
        case .unknownSpan(let id): "no recorded span has id \(id.uuidString.lowercased())"
        case .spanAlreadyEnded(let id): "span \(id.uuidString.lowercased()) was already ended"
        case .transactionEnded(let id): "transaction \(id.uuidString.lowercased()) has ended"
        case .closed: "the logger is closed"
        case .filterFailed(let filter, let reason): "the filter \"\(filter)\" failed: \(reason)"
        }
    }
}
