#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address as its network-order bytes: 4 for IPv4, 16 for IPv6. An IPv4-mapped IPv6
/// address (`::ffff:192.0.2.1`, what a dual-stack socket reports for an IPv4 peer) is its IPv4
/// address, so a rule written for one matches the other.
struct IPAddressBytes: Hashable, Sendable {
    let bytes: [UInt8]

    var isIPv4: Bool { bytes.count == 4 }

    /// `192.0.2.1`, `2001:db8::1`; also `[2001:db8::1]`, `[2001:db8::1]:443` and `192.0.2.1:80`
    /// (an `X-Forwarded-For` entry may carry the port). Nil for anything else.
    init?(parsing text: some StringProtocol) {
        var address = Substring(text).trimmingASCIISpaces
        if address.first == "[" {
            guard let close = address.firstIndex(of: "]") else { return nil }
            address = address[address.index(after: address.startIndex)..<close]
        } else if address.contains("."), let colon = address.firstIndex(of: ":"), !address[address.index(after: colon)...].contains(":") {
            address = address[..<colon]  // IPv4 with a port
        }
        guard !address.isEmpty, address.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(address), &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(address), &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            self.bytes = Array(bytes[12..<16])
        } else {
            self.bytes = bytes
        }
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }
}

extension Substring {
    var trimmingASCIISpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
