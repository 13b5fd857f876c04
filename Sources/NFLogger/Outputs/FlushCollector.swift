@_spi(NFLogShared) import NFLogSupport

/// Gathers one flush's results from several durable outputs and reports once, when the last
/// has answered: the collector's figures (or, without a collector, the first output's), its
/// error or else the first other output's, and every output's own result. An output the policy
/// disabled is listed (with ``UploadError/outputDisabled``) but neither leads nor fails the flush.
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
        guard let all else { return }
        // A disabled output is not this flush's failure, nor its lead.
        let active = order.filter { all[$0]?.error != .outputDisabled }
        guard let lead = (active.first ?? order.first).flatMap({ all[$0] }) else { return }
        let error = active.lazy.compactMap { all[$0]?.error }.first
        var combined = FlushResult(uploadedEvents: lead.uploadedEvents, remainingEvents: lead.remainingEvents,
                                   quarantinedEvents: lead.quarantinedEvents, error: error)
        combined.outputs = all
        completion(combined)
    }
}
