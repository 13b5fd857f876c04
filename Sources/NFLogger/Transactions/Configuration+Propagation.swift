import Foundation

extension Configuration {
    /// Which hosts get the `traceparent` header of a transaction (``TransactionHandle/propagationHeaders(for:)``).
    public struct Propagation: Sendable, Equatable {
        /// The app's own backends: a host (`api.example.com`), or every subdomain of one
        /// (`*.example.com`, which does not match `example.com` itself). Empty by default: no
        /// header goes anywhere until the app names its hosts.
        public var hosts: [String] = []

        public init(hosts: [String] = []) {
            self.hosts = hosts
        }

        /// Whether requests to `host` may carry the transaction.
        public func isFirstParty(_ host: String) -> Bool {
            let host = host.lowercased()
            return hosts.contains { pattern in
                let pattern = pattern.lowercased()
                if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) && host.count > pattern.count - 1 }
                return host == pattern
            }
        }

        func headers(for url: URL, context: TransactionContext) -> [String: String] {
            guard let host = url.host, isFirstParty(host) else { return [:] }
            return ["traceparent": context.traceparent]
        }
    }
}
