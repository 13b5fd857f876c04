public import Foundation

/// One upload the SDK made: a batch decoded from the wire format of `docs/PROTOCOL.md`, and how
/// the ``RecordingTransport`` answered it. A batch sent again after a failure is recorded again,
/// with the same ``id`` and the same events.
public struct RecordedBatch: Sendable, Hashable, Identifiable {
    /// The batch id, chosen by the SDK and unchanged when the batch is sent again.
    public let id: UUID
    /// The device's clock when this attempt was sent.
    public let sentAt: Date
    /// The `X-NFLog-Key` header: the configuration's `Configuration.appKey`.
    public let appKey: String?
    /// The standard properties of the app that sent it.
    public let context: RecordedContext
    /// Every session the batch's events were logged in.
    public let sessions: [RecordedSession]
    /// The events, in the order the SDK wrote them.
    public let events: [RecordedEvent]
    /// The aggregates (events a policy's `rules.aggregate` folded), once their windows closed.
    public let aggregates: [RecordedAggregate]
    /// From the batch's `diagnostics`: events the device's rolling database dropped before they
    /// could be sent, by name. Empty when it reported none.
    public let prunedEvents: [String: Int64]
    /// From the batch's `diagnostics`: the times the device found its database damaged and
    /// started a new one.
    public let databaseResets: [DatabaseReset]
    /// How the transport answered this attempt.
    public internal(set) var response: RecordingTransport.Response

    /// Whether the transport answered 2xx, so the SDK deleted the batch's events.
    public var isAccepted: Bool { response.isAccepted }

    /// A damaged database the device moved aside, as the batch reports it.
    public struct DatabaseReset: Sendable, Hashable {
        /// When the device found it.
        public let at: Date
        /// What was wrong with it.
        public let reason: String
    }
}

/// The standard properties of the app instance that sent a batch: the SDK's, the app's and the
/// system's.
public struct RecordedContext: Sendable, Hashable {
    public let sdkName: String
    public let sdkVersion: String
    /// `Configuration.appID`.
    public let appID: String
    /// `Configuration.appVersion`.
    public let appVersion: String
    public let osName: String
    public let osVersion: String
    public let locale: String
}

/// A session (one foreground period of the app) as a batch lists it.
public struct RecordedSession: Sendable, Hashable, Identifiable {
    public let id: UUID
    public let startedAt: Date
    /// When the app last went to the background; `nil` while it is in the foreground.
    public let endedAt: Date?
}
