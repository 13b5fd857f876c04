public import Foundation
@_spi(NFLogShared) public import NFLogSupport

/// An operator's policy, downloaded from the collector: which mode the SDK runs in, which events
/// it records and samples, how it uploads, how much it may store, where it must not record.
///
/// Every field but `version` and `mode` is optional; an absent field leaves the configuration's
/// value in force. Policies/README.md documents each field with its default and range.
public struct Policy: Sendable, Equatable {
    /// The policy format this SDK reads.
    static var supportedVersion: Int { PolicyDocument.supportedVersion }
    /// The largest policy document accepted, in bytes.
    static var maxBytes: Int { PolicyDocument.maxBytes }

    /// The `mode` field as written; ``mode`` is what it means to the facade.
    typealias Mode = PolicyDocument.Mode
    /// Upload settings the policy overrides (``Configuration/Upload``).
    typealias Upload = PolicyDocument.Upload
    /// How much the on-device database may hold before the oldest events are dropped.
    typealias Database = PolicyDocument.Database
    /// A priority for the events a pattern matches.
    typealias PriorityRule = PolicyDocument.PriorityRule

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

    /// Parses and validates a policy document. Nothing about it is applied here.
    ///
    /// - Parameter data: the policy document (UTF-8 JSON).
    /// - Parameter now: expired policies (`expires_at` ≤ now) are refused.
    /// - Throws: ``PolicyError`` for the first problem: too large, not JSON, an unknown or
    ///   mistyped field, a value out of range, a bad pattern, an unknown mode, expired.
    public static func parse(_ data: Data, now: Date = Date()) throws(PolicyError) -> Policy {
        do {
            return Policy(try PolicyDocument.parse(data, now: now))
        } catch {
            throw PolicyError(error)
        }
    }

    /// The SDK's view of a parsed document (the wire contract's parser is NFLogSupport's, shared
    /// with the collector).
    init(_ document: PolicyDocument) {
        version = document.version
        kind = document.mode
        rules = EventRules(allow: document.allow, deny: document.deny, sampling: document.sampling)
        priorities = document.priorities
        aggregates = document.aggregates
        upload = document.upload
        database = document.database
        spanTimeout = document.spanTimeout
        refreshInterval = document.refreshInterval
        minimumSDKVersion = document.minimumSDKVersion
        privacyZones = document.privacyZones
        automatic = document.automatic
        disabledOutputs = document.disabledOutputs
        expiresAt = document.expiresAt
    }

    static func format(_ date: Date) -> String { PolicyDocument.format(date) }
}
