import Foundation
import NFLogCollector
import NIOSSL
import Testing
@testable import NFLogger

/// The pinned transport's TLS settings: the impostor tests in EndToEndTests use self-signed
/// certificates, which the system would refuse anyway, so this checks that the pins replace the
/// system's trust store rather than add to it.
@Suite("Pinned transport")
struct PinnedTransportTests {
    @Test("Only the pinned certificates are trusted, with full verification and nothing added")
    func trustsOnlyThePins() throws {
        let pinning = try CertificatePinning(pem: try Self.certificate())
        let transport = PinnedTransport(pinning: pinning, timeout: .seconds(5))
        guard case .certificates(let roots) = transport.tls.trustRoots else {
            Issue.record("trust roots are \(String(describing: transport.tls.trustRoots)), not the pinned certificates")
            return
        }
        #expect(roots == pinning.certificates)
        #expect(transport.tls.additionalTrustRoots.isEmpty)
        #expect(transport.tls.certificateVerification == .fullVerification)
        transport.shutdown()
    }

    @Test("A huge request timeout is clamped, not a crash")
    func hugeTimeout() throws {
        let transport = PinnedTransport(pinning: try CertificatePinning(pem: try Self.certificate()), timeout: .seconds(Int64.max))
        transport.shutdown()
    }

    /// A real self-signed certificate, as `nflog-collector tls-cert` makes.
    static func certificate() throws -> String {
        try SelfSignedCertificate(hosts: ["127.0.0.1"]).certificatePEM
    }
}
