public import Foundation

/// A validated batch (docs/PROTOCOL.md): one context, the sessions it mentions, the events.
public struct Batch: Sendable {
    public let version: Int
    public let id: UUID
    public let sentAt: Int64
    public let sdkName: String
    public let sdkVersion: String
    public let context: Context
    public let events: [Event]
    /// What the device reports about itself: events it had to drop, database resets.
    public let diagnostics: Diagnostics?

    public struct Diagnostics: Sendable {
        /// Events the device's rolling database dropped before they could be sent, by name.
        public let pruned: [(name: String, count: Int64)]
        /// Times the device found its database damaged and started a new one.
        public let databaseResets: [(at: Int64, reason: String)]
    }

    /// The standard properties of the app instance that sent the batch.
    public struct Context: Sendable, Hashable {
        public let appID: String
        public let appVersion: String
        public let osName: String
        public let osVersion: String
        public let locale: String
        public let sessions: [Session]
    }

    public struct Session: Sendable, Hashable {
        public let id: UUID
        public let startedAt: Int64
        public let endedAt: Int64?
    }

    public enum Kind: String, Sendable {
        case point
        case span
    }

    public struct Event: Sendable {
        public let id: UUID
        public let session: UUID
        public let name: String
        public let kind: Kind
        public let type: String
        /// A point event's time, or a span's start, in Unix milliseconds.
        public let timestamp: Int64
        /// Span only.
        public let end: Int64?
        public let durationMilliseconds: Double?
        /// The parameters object, verbatim as sent (it is valid JSON: the batch was parsed).
        public let parameters: String?
        public let endParameters: String?
        /// Span only: closed by the SDK (after a crash or its timeout), not by the app.
        public let abandoned: Bool
    }
}
