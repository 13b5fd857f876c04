public import Logging
import Foundation

/// Recorded events as swift-log messages, for debugging: one message `event <name>` per event at
/// ``level``, with the metadata `uuid`, `kind` (`point`, `span`, `aggregate`), `type`,
/// `timestamp` (ISO 8601, UTC, to the millisecond) and `event` (the event's JSON, as a collector
/// receives it).
///
/// Best effort: each event is logged once, after the write that recorded it commits; nothing is
/// retried or kept (see ``BestEffortOutput``).
///
/// - Important: The `event` metadata carries the event's parameters. Do not point this output at
///   a production log sink that must not receive personal data.
public struct SwiftLogOutput: BestEffortOutput {
    public let id: String
    public let pattern: String
    /// Where the messages go.
    public let logger: Logger
    /// The level of every message. Default: `debug`.
    public let level: Logger.Level

    public init(id: String = "swift-log", logger: Logger, level: Logger.Level = .debug, pattern: String = "**") {
        self.id = id
        self.logger = logger
        self.level = level
        self.pattern = pattern
    }

    public func emit(_ events: [OutputEvent]) {
        guard logger.logLevel <= level, !events.isEmpty else { return }
        let formatter = ISO8601DateFormatter()  // not Sendable: one per call
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for event in events {
            logger.log(level: level, "event \(event.name)", metadata: [
                "uuid": .string(event.id.uuidString.lowercased()),
                "kind": .string(event.kind.rawValue),
                "type": .string(event.type),
                "timestamp": .string(formatter.string(from: event.timestamp)),
                "event": .string(event.json),
            ])
        }
    }
}
