@_spi(NFLogShared) import NFLogSupport

/// Which durable outputs take an event, by its name: the collector at `upload_url` if its
/// pattern matches, and the other durable outputs (by their numbers in the database) whose
/// patterns match, leaving out those the policy disabled (`outputs.disabled`).
///
/// Used on the RequestManager's queue only (its cache of names is not locked); built again when
/// the database is opened or the policy changes.
final class OutputRouter {
    struct Route: Equatable {
        /// The collector takes it (it goes in its queue, the table's `batch_id`).
        let collector: Bool
        /// The other durable outputs that take it.
        let outputs: [Int64]

        var isEmpty: Bool { !collector && outputs.isEmpty }
    }

    private let collector: Bool
    private let collectorPattern: TagPattern?
    private let outputs: [(number: Int64, pattern: TagPattern)]
    /// Names repeat: a route is matched once per name (bounded, cleared when full).
    private var cache: [String: Route] = [:]
    private static let cacheLimit = 4_096

    /// - Parameters:
    ///   - collector: whether the collector keeps a queue (not disabled; configured, or the
    ///     only durable output there is).
    ///   - collectorPattern: its pattern, `nil` for every name.
    ///   - outputs: the other enabled durable outputs.
    init(collector: Bool, collectorPattern: TagPattern?, outputs: [(number: Int64, pattern: TagPattern)]) {
        self.collector = collector
        self.collectorPattern = collectorPattern
        self.outputs = outputs
    }

    func route(for name: String) -> Route {
        if let known = cache[name] { return known }
        let route = Route(collector: collector && (collectorPattern?.matches(name) ?? true),
                          outputs: outputs.filter { $0.pattern.matches(name) }.map(\.number))
        if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
        cache[name] = route
        return route
    }
}
