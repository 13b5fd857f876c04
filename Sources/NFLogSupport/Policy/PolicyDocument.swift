public import Foundation

/// A policy document as the wire contract defines it (Policies/README.md, docs/PROTOCOL.md):
/// parsed and checked, nothing applied. The SDK builds its `Policy` from one; the collector parses
/// every policy it serves with the same code, so what devices would refuse is never served.
@_spi(NFLogShared) public struct PolicyDocument: Sendable, Equatable {
    /// The policy format this SDK and collector read.
    @_spi(NFLogShared) public static let supportedVersion = 1
    /// The largest policy document accepted, in bytes.
    @_spi(NFLogShared) public static let maxBytes = 64 * 1024
    /// The most pattern alternatives (after brace expansion) one policy may hold: patterns run
    /// on the app's thread for every event.
    @_spi(NFLogShared) public static let maxAlternatives = 4_096

    /// The `mode` field.
    @_spi(NFLogShared) public enum Mode: String, Sendable, Equatable {
        case disabled, active, specific
    }

    /// `upload`: settings that override the SDK's configuration.
    @_spi(NFLogShared) public struct Upload: Sendable, Equatable {
        @_spi(NFLogShared) public var interval: TimeInterval?
        @_spi(NFLogShared) public var batchMaxEvents: Int?
        @_spi(NFLogShared) public var batchMaxBytes: Int?
        @_spi(NFLogShared) public var gzipLevel: Int?

        @_spi(NFLogShared) public init(interval: TimeInterval? = nil, batchMaxEvents: Int? = nil, batchMaxBytes: Int? = nil, gzipLevel: Int? = nil) {
            self.interval = interval
            self.batchMaxEvents = batchMaxEvents
            self.batchMaxBytes = batchMaxBytes
            self.gzipLevel = gzipLevel
        }
    }

    /// `database`: how much the on-device database may hold before the oldest events are dropped.
    @_spi(NFLogShared) public struct Database: Sendable, Equatable {
        @_spi(NFLogShared) public var maxRows: Int?
        @_spi(NFLogShared) public var maxBytes: Int?
        @_spi(NFLogShared) public var maxAge: TimeInterval?

        @_spi(NFLogShared) public init(maxRows: Int? = nil, maxBytes: Int? = nil, maxAge: TimeInterval? = nil) {
            self.maxRows = maxRows
            self.maxBytes = maxBytes
            self.maxAge = maxAge
        }
    }

    /// `rules.priorities`: a priority for the events a pattern matches.
    @_spi(NFLogShared) public struct PriorityRule: Sendable, Equatable {
        @_spi(NFLogShared) public let pattern: TagPattern
        @_spi(NFLogShared) public let priority: Int
    }

    @_spi(NFLogShared) public let version: Int
    @_spi(NFLogShared) public let mode: Mode
    /// `rules.allow`, `rules.deny`, `rules.sampling`.
    @_spi(NFLogShared) public let allow: [TagPattern]
    @_spi(NFLogShared) public let deny: [TagPattern]
    @_spi(NFLogShared) public let sampling: [SamplingRule]
    @_spi(NFLogShared) public let priorities: [PriorityRule]
    @_spi(NFLogShared) public let aggregates: [AggregateRule]
    @_spi(NFLogShared) public let upload: Upload
    @_spi(NFLogShared) public let database: Database
    /// `span_timeout_s`.
    @_spi(NFLogShared) public let spanTimeout: TimeInterval?
    /// `refresh_interval_s`.
    @_spi(NFLogShared) public let refreshInterval: TimeInterval?
    /// `min_sdk_version`, as written (a valid ``SemanticVersion``).
    @_spi(NFLogShared) public let minimumSDKVersion: String?
    @_spi(NFLogShared) public let privacyZones: [PrivacyZone]
    /// `auto`.
    @_spi(NFLogShared) public let automatic: AutomaticSources
    /// `outputs.disabled`.
    @_spi(NFLogShared) public let disabledOutputs: Set<String>
    /// `expires_at`.
    @_spi(NFLogShared) public let expiresAt: Date?

    /// Whether `id` may name an output: 1–64 characters from a–z, 0–9, `_`, `-` and `.`.
    @_spi(NFLogShared) public static func isValidOutputID(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    /// An RFC 3339 time as `expires_at` is written.
    @_spi(NFLogShared) public static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
