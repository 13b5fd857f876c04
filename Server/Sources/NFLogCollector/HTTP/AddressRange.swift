/// A block of IP addresses, `192.0.2.0/24` or `2001:db8::/32`; a bare address is the block of
/// that address alone.
struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    let network: IPAddressBytes
    let prefixLength: Int
    let description: String

    init?(parsing text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddressBytes(parsing: parts[0]), !parts[0].contains("[") else { return nil }
        let writtenAsIPv6 = parts[0].contains(":")
        let bits = writtenAsIPv6 ? 128 : 32
        var length = address.bytes.count * 8
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given) else { return nil }
            // An IPv4 block written as IPv4-mapped IPv6 (::ffff:10.0.0.0/104) counts from bit 96.
            length = writtenAsIPv6 && address.isIPv4 ? given - 96 : given
            guard length >= 0 else { return nil }
        }
        self.network = address
        self.prefixLength = length
        self.description = text
    }

    func contains(_ address: IPAddressBytes) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(network.bytes, address.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }
}
