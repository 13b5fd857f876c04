@_spi(NFLogShared) import NFLogSupport

/// The durable outputs a logger was configured with, as storage sees them: whether the collector
/// keeps a queue, with its pattern, and the others by id.
struct DurableOutputSet: Sendable {
    /// `false` when the collector has no queue: other durable outputs are configured and there
    /// is no `upload_url`. With no output at all, the collector's queue still keeps every event
    /// (they stay on the device, as they always have without an `upload_url`).
    let hasCollector: Bool
    /// The collector's pattern; `nil` for `**`, every name.
    let collectorPattern: TagPattern?
    let others: [(id: String, pattern: TagPattern)]

    /// Whether any output other than the collector is tracked (`deliveries` is used at all).
    var tracksOthers: Bool { !others.isEmpty }

    static let collectorOnly = DurableOutputSet(hasCollector: true, collectorPattern: nil, others: [])

    init(hasCollector: Bool, collectorPattern: TagPattern?, others: [(id: String, pattern: TagPattern)]) {
        self.hasCollector = hasCollector
        self.collectorPattern = collectorPattern
        self.others = others
    }

    /// The configuration's (validated: every pattern parses).
    init(_ configuration: Configuration) {
        var others: [(id: String, pattern: TagPattern)] = []
        for output in configuration.outputs where output is any DurableOutput || output is CollectorOutput {
            if let pattern = try? TagPattern(output.pattern) { others.append((output.id, pattern)) }
        }
        self.others = others
        hasCollector = configuration.uploadURL != nil || others.isEmpty
        collectorPattern = configuration.collectorPattern == "**" ? nil : try? TagPattern(configuration.collectorPattern)
    }

    /// The router for the outputs the policy leaves enabled, or `nil` when every event simply
    /// goes to the collector (no routing to do on the write path).
    func router(numbers: [String: Int64], disabled: Set<String>) -> OutputRouter? {
        let collectorEnabled = hasCollector && !disabled.contains(Configuration.collectorOutputID)
        if others.isEmpty && collectorEnabled && collectorPattern == nil { return nil }
        return OutputRouter(collector: collectorEnabled, collectorPattern: collectorPattern,
                            outputs: others.compactMap { output in
                                guard !disabled.contains(output.id), let number = numbers[output.id] else { return nil }
                                return (number, output.pattern)
                            })
    }
}
