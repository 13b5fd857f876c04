@testable import NFLogCollector
import Testing

@Suite("Who the client is: the peer, or X-Forwarded-For from a listed proxy only")
struct TrustedProxiesTests {
    @Test("Without --trusted-proxy the peer counts, whatever X-Forwarded-For says")
    func peerByDefault() {
        #expect(TrustedProxies.none.client(peer: "192.0.2.7", forwardedFor: ["198.51.100.1"]).description == "192.0.2.7")
        #expect(TrustedProxies.none.client(peer: nil, forwardedFor: []) == .unknown)
    }

    @Test("From a listed proxy the rightmost unlisted entry is the client; what a client wrote to its left is ignored")
    func forwardedFromProxy() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "2001:db8:ffff::1"])
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: ["203.0.113.9, 198.51.100.4"]).description == "198.51.100.4")
        // Two proxies in a row, and the header split over two lines.
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: ["6.6.6.6, 198.51.100.4", "10.9.9.9"]).description == "198.51.100.4")
        // A proxy not listed: the peer counts, its header is not read.
        #expect(proxies.client(peer: "192.0.2.1", forwardedFor: ["198.51.100.4"]).description == "192.0.2.1")
        // Garbage ends the walk at the last listed proxy.
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: ["198.51.100.4, nonsense"]).description == "10.1.2.3")
        #expect(proxies.client(peer: "2001:db8:ffff::1", forwardedFor: ["[2001:db8:1:2:3:4:5:6]:443"]).description == "2001:db8:1:2::/64")
        // Ports and IPv4-mapped peers.
        #expect(proxies.client(peer: "::ffff:10.0.0.1", forwardedFor: ["198.51.100.4:5000"]).description == "198.51.100.4")
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: []).description == "10.0.0.1")
    }

    @Test("An IPv6 client is its /64: one host's addresses are one client")
    func ipv6Prefix() {
        let one = TrustedProxies.none.client(peer: "2001:db8:1:2::1", forwardedFor: [])
        let other = TrustedProxies.none.client(peer: "2001:db8:1:2:ffff::9", forwardedFor: [])
        #expect(one == other)
        #expect(one != TrustedProxies.none.client(peer: "2001:db8:1:3::1", forwardedFor: []))
    }

    @Test("Entries that are not addresses or blocks are refused, naming the entry", arguments: ["10.0.0.0/33", "example.com", "", "10.0.0.1/", "::/129", "[::1]"])
    func invalid(_ entry: String) {
        #expect(throws: TrustedProxyError(entry: entry)) { try TrustedProxies([entry]) }
    }

    func ip(_ text: String) throws -> IPAddressBytes { try #require(IPAddressBytes(parsing: text)) }

    @Test("Blocks match by prefix")
    func blocks() throws {
        let proxies = try TrustedProxies(["192.168.4.0/22", "fd00::/8", "::ffff:172.16.0.0/108", "0.0.0.0/0"])
        #expect(try proxies.contains(ip("192.168.7.255")))
        #expect(try proxies.contains(ip("fd12::1")))
        #expect(try TrustedProxies(["192.168.4.0/22"]).contains(ip("192.168.8.0")) == false)
        #expect(try TrustedProxies(["::ffff:172.16.0.0/108"]).contains(ip("172.31.255.1")))
        #expect(try TrustedProxies(["::ffff:172.16.0.0/108"]).contains(ip("172.32.0.1")) == false)
    }
}
