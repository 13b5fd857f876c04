@_spi(NFLogShared) import NFLogSupport

extension Configuration {
    /// The id of the collector at ``uploadURL`` among the outputs.
    static let collectorOutputID = "collector"

    /// Every output id is well formed and used once, every pattern parses.
    func validateOutputs() throws(ConfigurationError) {
        do { _ = try TagPattern(collectorPattern) } catch {
            throw .invalidField("collector_pattern", reason: "is not a valid pattern: \(error.reason)")
        }
        // `collector` names the collector at upload_url, configured or not (the policy and the
        // database use it).
        var seen: Set<String> = [Self.collectorOutputID]
        for output in outputs {
            let field = "outputs.\(output.id)"
            guard Self.isValidOutputID(output.id) else {
                throw .invalidField("outputs", reason: "has the id \"\(output.id)\": use 1–64 characters from a–z, 0–9, _, - and .")
            }
            guard seen.insert(output.id).inserted else {
                throw .invalidField(field, reason: output.id == Self.collectorOutputID
                    ? "uses the id reserved for the collector at upload_url" : "is configured twice")
            }
            do { _ = try TagPattern(output.pattern) } catch {
                throw .invalidField(field + ".pattern", reason: "is not a valid pattern: \(error.reason)")
            }
            if let collector = output as? CollectorOutput { try collector.validate(field: field) }
            if let file = output as? JSONLinesOutput { try file.validate(field: field) }
            guard output is any DurableOutput || output is any BestEffortOutput || output is CollectorOutput else {
                throw .invalidField(field, reason: "must conform to DurableOutput or BestEffortOutput")
            }
        }
    }

    static func isValidOutputID(_ id: String) -> Bool { PolicyDocument.isValidOutputID(id) }
}
