@_spi(NFLogShared) import NFLogSupport

/// The limits the Pruner enforces: the configuration's, with the policy's `database` and
/// `span_timeout_s` on top when a policy is in force.
struct StorageLimits: Sendable, Equatable {
    var maxRows: Int
    var maxBytes: Int
    var maxAgeMilliseconds: Int64
    var spanTimeoutMilliseconds: Int64
    /// Pattern → priority from the policy; lower priorities are dropped first. Empty: age only.
    var priorities: [(pattern: TagPattern, priority: Int)] = []

    init(_ limits: Configuration.Limits, policy: Policy? = nil) {
        maxRows = policy?.database.maxRows ?? limits.maxStoredEvents
        maxBytes = policy?.database.maxBytes ?? limits.maxDatabaseBytes
        maxAgeMilliseconds = (policy?.database.maxAge ?? limits.maxEventAge).milliseconds
        spanTimeoutMilliseconds = (policy?.spanTimeout ?? limits.spanTimeout).milliseconds
        priorities = policy?.priorities.map { ($0.pattern, $0.priority) } ?? []
    }

    /// The priority an event with this name is stored with.
    func priority(for name: String) -> Int {
        priorities.first { $0.pattern.matches(name) }?.priority ?? 0
    }

    static func == (lhs: StorageLimits, rhs: StorageLimits) -> Bool {
        lhs.maxRows == rhs.maxRows && lhs.maxBytes == rhs.maxBytes && lhs.maxAgeMilliseconds == rhs.maxAgeMilliseconds
            && lhs.spanTimeoutMilliseconds == rhs.spanTimeoutMilliseconds
            && lhs.priorities.elementsEqual(rhs.priorities) { $0.pattern == $1.pattern && $0.priority == $1.priority }
    }
}
