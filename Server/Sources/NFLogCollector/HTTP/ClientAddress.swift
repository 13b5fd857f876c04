/// Who an upload comes from, for the per-client limits (``CollectorConfiguration/maxUploadsPerClient``):
/// an IPv4 address, or an IPv6 address's /64, since one IPv6 host is handed a whole /64 and
/// could otherwise be any number of clients.
enum ClientAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)
    case v6Prefix(UInt64)
    /// A connection with no IP peer address (none seen in practice): all such count as one client.
    case unknown

    init(_ address: IPAddressBytes) {
        if address.isIPv4 {
            self = .v4(address.bytes.reduce(0) { $0 << 8 | UInt32($1) })
        } else {
            self = .v6Prefix(address.bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        }
    }

    var description: String {
        switch self {
        case .v4(let value):
            return (0..<4).map { String(value >> (24 - 8 * UInt32($0)) & 0xff) }.joined(separator: ".")
        case .v6Prefix(let value):
            let groups = (0..<4).map { String(value >> (48 - 16 * UInt64($0)) & 0xffff, radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        case .unknown:
            return "an unknown address"
        }
    }
}
