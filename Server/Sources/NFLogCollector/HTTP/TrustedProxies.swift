/// The reverse proxies whose `X-Forwarded-For` the collector believes (`serve --trusted-proxy`).
///
/// The per-client limits count uploads by the address they come from. Behind a proxy every
/// connection comes from the proxy, so the client is in `X-Forwarded-For`, which anyone can
/// write. It is read only on a connection from a listed proxy, from its right end (the entry
/// that proxy appended): entries that are listed proxies themselves are skipped, and the first
/// that is not is the client, as nginx's `real_ip_recursive on` does. Whatever a client wrote
/// further left is never looked at. An entry that is not an address ends the walk: the last
/// proxy passed is then the client. Empty (the default): the peer address always counts.
package struct TrustedProxies: Sendable, Equatable, CustomStringConvertible {
    let ranges: [AddressRange]

    /// No proxy is trusted: the connection's peer is the client.
    package static let none = TrustedProxies(ranges: [])

    /// - Parameter entries: addresses (`10.0.0.5`, `::1`) or blocks (`10.0.0.0/8`, `fd00::/8`).
    /// - Throws: ``TrustedProxyError`` naming the first entry that is neither.
    package init(_ entries: [String]) throws(TrustedProxyError) {
        var ranges: [AddressRange] = []
        for entry in entries {
            guard let range = AddressRange(parsing: entry) else { throw TrustedProxyError(entry: entry) }
            ranges.append(range)
        }
        self.ranges = ranges
    }

    private init(ranges: [AddressRange]) {
        self.ranges = ranges
    }

    package var isEmpty: Bool { ranges.isEmpty }

    package var description: String { ranges.map(\.description).joined(separator: ", ") }

    func contains(_ address: IPAddressBytes) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// The client of a request that came from `peer` (the connection's address, as
    /// `SocketAddress.ipAddress` gives it) with these `X-Forwarded-For` header values, in order.
    func client(peer: String?, forwardedFor: [String]) -> ClientAddress {
        guard let peer = peer.flatMap(IPAddressBytes.init(parsing:)) else { return .unknown }
        guard contains(peer) else { return ClientAddress(peer) }
        var client = peer
        // At most 64 hops are read: a longer header is a client's padding, and the walk stops there.
        for hop in forwardedFor.flatMap({ $0.split(separator: ",") }).reversed().prefix(64) {
            guard let address = IPAddressBytes(parsing: hop) else { break }
            client = address
            if !contains(address) { break }
        }
        return ClientAddress(client)
    }
}

/// A `--trusted-proxy` entry that is neither an IP address nor a block of them.
package struct TrustedProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    package let entry: String
    package var description: String {
        "--trusted-proxy: \(entry.debugDescription) is not an IP address or a block such as 10.0.0.0/8 or fd00::/8"
    }
}
