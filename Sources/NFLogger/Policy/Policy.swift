public import Foundation

/// An operator's policy, downloaded from the collector: which mode the SDK runs in, which events
/// it records and samples, how it uploads, how much it may store, where it must not record.
///
/// Every field but `version` and `mode` is optional; an absent field leaves the configuration's
/// value in force. Policies/README.md documents each field with its default and range.
public struct Policy: Sendable, Equatable {
    /// The policy format this SDK reads.
    static let supportedVersion = 1
    /// The largest policy document accepted, in bytes.
    static let maxBytes = 64 * 1024

    /// The `mode` field as written; ``mode`` is what it means to the facade.
    enum Mode: String, Sendable, Equatable {
        case disabled, active, specific
    }

    /// Upload settings the policy overrides (``Configuration/Upload``).
    struct Upload: Sendable, Equatable {
        var interval: TimeInterval?
        var batchMaxEvents: Int?
        var batchMaxBytes: Int?
        var gzipLevel: Int?
    }

    /// How much the on-device database may hold before the oldest events are dropped.
    struct Database: Sendable, Equatable {
        var maxRows: Int?
        var maxBytes: Int?
        var maxAge: TimeInterval?
    }

    public let version: Int
    let kind: Mode
    /// In specific mode `allow` selects; in every mode `deny` refuses and `sampling` samples.
    public let rules: EventRules
    /// When the database must drop events, lower priorities go first (then the oldest). The first
    /// rule whose pattern matches gives an event's priority; others have 0.
    let priorities: [PriorityRule]
    /// `rules.aggregate`: events folded into aggregates instead of stored one by one (the first
    /// rule whose pattern matches).
    let aggregates: [AggregateRule]

    /// A priority for the events a pattern matches.
    struct PriorityRule: Sendable, Equatable {
        let pattern: TagPattern
        let priority: Int
    }
    let upload: Upload
    let database: Database
    /// A span still open after this long (seconds) is closed as abandoned.
    let spanTimeout: TimeInterval?
    /// How often (seconds) the SDK asks the collector for a newer policy. Default: 1 hour.
    let refreshInterval: TimeInterval?
    /// Below this SDK version the SDK is off (calls complete with
    /// ``FilterReason/sdkBelowMinimumVersion``).
    public let minimumSDKVersion: String?
    /// Circles inside which nothing is recorded, given the app's location.
    let privacyZones: [PrivacyZone]
    /// `auto`: which automatic sources (NFLoggerInstrumentation) may record.
    @_spi(NFLogShared) public let automatic: AutomaticSources
    /// `outputs.disabled`: the outputs (by id) switched off. A disabled durable output sends
    /// nothing and is owed nothing new; a disabled best-effort output is handed nothing.
    let disabledOutputs: Set<String>
    /// After this time the policy no longer applies (the configuration's default does).
    public let expiresAt: Date?

    /// The mode the policy sets; in specific mode it carries the policy's allow list.
    public var mode: LogMode {
        switch kind {
        case .disabled: .disabled
        case .active: .active
        case .specific: .specific(EventRules(allow: rules.allow))
        }
    }

    /// The rules that apply in every mode: deny and sampling.
    var sharedRules: EventRules { EventRules(allow: [TagPattern](), deny: rules.deny, sampling: rules.sampling) }

    /// Whether this SDK is older than the policy allows.
    var excludesThisSDK: Bool {
        guard let minimum = minimumSDKVersion.flatMap(SemanticVersion.init),
              let current = SemanticVersion(NFLogger.sdkVersion) else { return false }
        return current < minimum
    }

    func isExpired(at now: Date) -> Bool {
        expiresAt.map { $0 <= now } ?? false
    }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
