@_spi(NFLogShared) import NFLogSupport

extension Configuration {
    /// The longest filter name, in bytes.
    static let maxFilterNameBytes = 64

    /// Every filter has a name of 1–64 bytes, used once, and a pattern that parses.
    func validateFilters() throws(ConfigurationError) {
        var seen: Set<String> = []
        for filter in filters {
            let name = filter.name
            guard (1...Self.maxFilterNameBytes).contains(name.utf8.count) else {
                throw .invalidField("filters", reason: "has a filter named \"\(name.prefix(80))\": a name must be 1–\(Self.maxFilterNameBytes) bytes")
            }
            let field = "filters.\(name)"
            guard seen.insert(name).inserted else { throw .invalidField(field, reason: "is configured twice: filter names must be unique") }
            do { _ = try TagPattern(filter.pattern) } catch {
                throw .invalidField(field + ".pattern", reason: "is not a valid pattern: \(error.reason)")
            }
        }
    }
}
