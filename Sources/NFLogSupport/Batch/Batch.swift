public import Foundation

/// A validated batch (docs/PROTOCOL.md): one context, the sessions it mentions, the events and
/// the aggregates.
@_spi(NFLogShared) public struct Batch: Sendable {
    @_spi(NFLogShared) public let version: Int
    @_spi(NFLogShared) public let id: UUID
    @_spi(NFLogShared) public let sentAt: Int64
    @_spi(NFLogShared) public let sdkName: String
    @_spi(NFLogShared) public let sdkVersion: String
    @_spi(NFLogShared) public let context: Context
    @_spi(NFLogShared) public let events: [Event]
    /// Events folded into one record per name, window and dimension values (empty when the
    /// batch carries none).
    @_spi(NFLogShared) public let aggregates: [Aggregate]
    /// What the device reports about itself: events it had to drop, database resets.
    @_spi(NFLogShared) public let diagnostics: Diagnostics?

    @_spi(NFLogShared) public struct Diagnostics: Sendable {
        /// Events the device's rolling database dropped before they could be sent, by name.
        @_spi(NFLogShared) public let pruned: [(name: String, count: Int64)]
        /// Times the device found its database damaged and started a new one.
        @_spi(NFLogShared) public let databaseResets: [(at: Int64, reason: String)]
        /// Events this collector refused for good that the device set aside (quarantined) since
        /// its last report.
        @_spi(NFLogShared) public let quarantined: Int64
    }

    /// The standard properties of the app instance that sent the batch.
    @_spi(NFLogShared) public struct Context: Sendable, Hashable {
        @_spi(NFLogShared) public let appID: String
        @_spi(NFLogShared) public let appVersion: String
        @_spi(NFLogShared) public let osName: String
        @_spi(NFLogShared) public let osVersion: String
        @_spi(NFLogShared) public let locale: String
        @_spi(NFLogShared) public let sessions: [Session]
    }

    @_spi(NFLogShared) public struct Session: Sendable, Hashable {
        @_spi(NFLogShared) public let id: UUID
        @_spi(NFLogShared) public let startedAt: Int64
        @_spi(NFLogShared) public let endedAt: Int64?
    }

    @_spi(NFLogShared) public enum Kind: String, Sendable {
        case point
        case span
    }

    /// Where an event was logged: the app's own code, or web content through the SDK's web
    /// bridge (docs/BRIDGE.md). Absent on the wire means native.
    @_spi(NFLogShared) public enum Source: String, Sendable {
        case native
        case web
    }

    @_spi(NFLogShared) public struct Event: Sendable {
        @_spi(NFLogShared) public let id: UUID
        @_spi(NFLogShared) public let session: UUID
        @_spi(NFLogShared) public let name: String
        @_spi(NFLogShared) public let kind: Kind
        @_spi(NFLogShared) public let type: String
        /// A point event's time, or a span's start, in Unix milliseconds.
        @_spi(NFLogShared) public let timestamp: Int64
        /// Span only.
        @_spi(NFLogShared) public let end: Int64?
        @_spi(NFLogShared) public let durationMilliseconds: Double?
        /// The parameters object, verbatim as sent (it is valid JSON: the batch was parsed).
        @_spi(NFLogShared) public let parameters: String?
        @_spi(NFLogShared) public let endParameters: String?
        /// Span only: closed by the SDK (after a crash or its timeout), not by the app.
        @_spi(NFLogShared) public let abandoned: Bool
        /// The transaction (a use case, possibly continued by a backend) the event belongs to:
        /// the uuid of the transaction's own span.
        @_spi(NFLogShared) public let transaction: UUID?
        /// The span the event was logged under, when that is not the transaction's own span or
        /// was logged by another process (a backend continuing the app's request).
        @_spi(NFLogShared) public let parentSpan: SpanID?
        /// Native unless the event was logged by web content through the web bridge.
        @_spi(NFLogShared) public let source: Source
        /// Web events only, and optional for them: the origin (`scheme://host[:port]`, lowercase)
        /// of the page that logged the event.
        @_spi(NFLogShared) public let origin: String?
    }

    /// Many events of one name folded into one record (docs/PROTOCOL.md, "Aggregates").
    @_spi(NFLogShared) public struct Aggregate: Sendable {
        /// Unique per app in a namespace of its own: an event may have the same uuid.
        @_spi(NFLogShared) public let id: UUID
        /// The session in which the aggregate was opened.
        @_spi(NFLogShared) public let session: UUID
        @_spi(NFLogShared) public let name: String
        @_spi(NFLogShared) public let type: String
        /// The time range covered, in Unix milliseconds: `start ≤ end ≤ start + windowSeconds × 1000`.
        @_spi(NFLogShared) public let start: Int64
        @_spi(NFLogShared) public let end: Int64
        @_spi(NFLogShared) public let windowSeconds: Int64
        /// The events folded in, at least 1.
        @_spi(NFLogShared) public let count: Int64
        /// The values of the rule's dimension parameters, sorted by key (UTF-8 byte order).
        @_spi(NFLogShared) public let dimensions: [(key: String, value: String)]
        /// The series limit was reached: this aggregate folds every further series (no dimensions).
        @_spi(NFLogShared) public let overflow: Bool
        /// Each numeric parameter's summary, by parameter name.
        @_spi(NFLogShared) public let measures: [String: MeasureSummary]
        /// The `measures` object verbatim as sent (valid JSON: the batch was parsed and each
        /// summary decoded from it).
        @_spi(NFLogShared) public let measuresJSON: String

        /// The dimensions as canonical JSON: an object with keys in UTF-8 byte order, `{}` when
        /// there are none. What the store keeps, so equal dimensions are equal text.
        @_spi(NFLogShared) public var dimensionsJSON: String {
            var out = JSONWriter(capacity: 32 * (dimensions.count + 1))
            out.writeLiteral("{")
            for (index, dimension) in dimensions.enumerated() {
                if index > 0 { out.writeLiteral(",") }
                out.writeString(dimension.key)
                out.writeLiteral(":")
                out.writeString(dimension.value)
            }
            out.writeLiteral("}")
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }
}
