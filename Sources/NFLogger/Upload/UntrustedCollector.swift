/// The collector's certificate did not lead to a pinned certificate or did not name the host, or
/// the URL was not https.
struct UntrustedCollector: Error, CustomStringConvertible {
    let host: String
    let detail: String
    var description: String {
        "the collector at \(host): \(detail)"
    }
}
