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
    /// Why the last policy was refused (or, having expired, stopped applying); `nil` once one is
    /// applied, or when the last check brought none.
    public var lastError: PolicyError?
    /// Why the last check brought no policy; `nil` if an answer came. At most one of this and
    /// ``lastError`` is set: the last check's.
    public var lastFetchError: PolicyFetchError?
    /// When the collector will be asked next.
    public var nextRefresh: Date?

    init(source: Source, etag: String? = nil, appliedAt: Date? = nil, lastCheck: Date? = nil,
                lastError: PolicyError? = nil, lastFetchError: PolicyFetchError? = nil, nextRefresh: Date? = nil) {
        self.source = source
        self.etag = etag
        self.appliedAt = appliedAt
        self.lastCheck = lastCheck
        self.lastError = lastError
        self.lastFetchError = lastFetchError
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
    /// No policy came (network error, another status, no policy URL, the logger closed); nothing
    /// changed.
    case failed(PolicyFetchError)
}
