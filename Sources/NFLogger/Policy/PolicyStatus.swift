public import Foundation

/// Where the policy in force came from, and how the last check went: part of ``Diagnostics``.
public struct PolicyStatus: Sendable, Equatable {
    public enum Source: String, Sendable, Equatable {
        /// No policy: the configuration's mode applies.
        case none
        /// The configuration's default, ``Configuration/PolicyOptions/fallback``.
        case defaultPolicy
        /// Cached on disk by an earlier run.
        case cache
        /// Fetched from the collector by this run.
        case collector
    }

    public var source: Source
    /// The collector's ETag for the policy in force.
    public var etag: String?
    /// When the policy in force was applied.
    public var appliedAt: Date?
    /// When the collector was last asked.
    public var lastCheck: Date?
    /// Why the last fetched policy was refused, or the last check failed; `nil` if it went well.
    public var lastError: PolicyError?
    /// When the collector will be asked next.
    public var nextRefresh: Date?

    init(source: Source, etag: String? = nil, appliedAt: Date? = nil, lastCheck: Date? = nil,
                lastError: PolicyError? = nil, nextRefresh: Date? = nil) {
        self.source = source
        self.etag = etag
        self.appliedAt = appliedAt
        self.lastCheck = lastCheck
        self.lastError = lastError
        self.nextRefresh = nextRefresh
    }
}

/// What ``NFLogger/refreshPolicy(completion:)`` found.
public enum PolicyUpdate: Sendable, Equatable {
    /// A new policy is in force.
    case applied
    /// The collector said the policy in force is current (304, or the same bytes).
    case unchanged
    /// The collector has no policy for this app (404); nothing changed.
    case notServed
    /// A policy came but was refused (invalid, too large, expired, unsigned, badly signed); the
    /// last good policy stays in force.
    case rejected(PolicyError)
    /// No policy came (network error, another status); nothing changed.
    case failed(PolicyError)
}
