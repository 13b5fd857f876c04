import Foundation
import NIOSSL
import Testing
@testable import NFLogger

/// The pinned transport's TLS settings: the impostor tests in EndToEndTests use self-signed
/// certificates, which the system would refuse anyway, so this checks that the pins replace the
/// system's trust store rather than add to it.
@Suite("Default transport")
struct DefaultTransportTests {
    @Test("Only the pinned certificates are trusted, with full verification and nothing added")
    func trustsOnlyThePins() throws {
        let pinning = try CertificatePinning(pem: try Self.certificate())
        let transport = DefaultHTTPTransport(timeout: 5, pinning: pinning)
        defer { transport.shutdown() }
        let tls = transport.base.tls
        guard case .certificates(let roots) = tls.trustRoots else {
            Issue.record("trust roots are \(String(describing: tls.trustRoots)), not the pinned certificates")
            return
        }
        #expect(roots == pinning.derCertificates.compactMap(CertificatePinning.platformCertificate))
        #expect(roots.count == 1)
        #expect(tls.additionalTrustRoots.isEmpty)
        #expect(tls.certificateVerification == .fullVerification)
    }

    @Test("A huge request timeout is clamped, not a crash")
    func hugeTimeout() throws {
        let transport = DefaultHTTPTransport(timeout: .greatestFiniteMagnitude, pinning: try CertificatePinning(pem: try Self.certificate()))
        transport.shutdown()
    }

    /// A real self-signed certificate for 127.0.0.1, as `nflog-collector tls-cert` makes (made
    /// once with openssl, valid for a century: only its bytes matter here, nothing connects).
    static func certificate() throws -> String {
        guard let url = Bundle.module.url(forResource: "Fixtures/self-signed", withExtension: "pem") else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try String(contentsOf: url, encoding: .utf8)
    }
}
