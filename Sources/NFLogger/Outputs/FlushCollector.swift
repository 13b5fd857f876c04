import NFLogSupport

/// Gathers one flush's results from several durable outputs and reports once, when the last
/// has answered: the collector's figures (or, without a collector, the first output's), its
/// error or else the first other output's, and every output's own result.
final class FlushCollector: Sendable {
    private let order: [String]
    private let results = Lock([String: FlushResult]())
    private let completion: @Sendable (FlushResult) -> Void

    init(outputs: [String], completion: @escaping @Sendable (FlushResult) -> Void) {
        // The collector first: its figures lead.
        order = outputs.filter { $0 == Configuration.collectorOutputID } + outputs.filter { $0 != Configuration.collectorOutputID }
        self.completion = completion
    }

    /// One output's flush finished (each reports exactly once).
    func finished(_ output: String, _ result: FlushResult) {
        let all = results.withLock { results -> [String: FlushResult]? in
            results[output] = result
            return results.count == order.count ? results : nil
        }
        guard let all, let lead = order.first.flatMap({ all[$0] }) else { return }
        let error = order.lazy.compactMap { all[$0]?.error }.first
        var combined = FlushResult(uploadedEvents: lead.uploadedEvents, remainingEvents: lead.remainingEvents,
                                   quarantinedEvents: lead.quarantinedEvents, error: error)
        combined.outputs = all
        completion(combined)
    }
}
