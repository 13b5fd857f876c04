import Foundation
import NIOSSL

/// The certificates the SDK trusts for the collector, in place of the system's trust store
/// (``Configuration/pinning``).
///
/// With pinning, uploads and policy fetches go through async-http-client with these
/// certificates as its only trust roots (URLSession on Linux cannot pin), and the collector's
/// chain must lead to one of them; hostnames are still checked. Pin a self-signed certificate:
/// the collector's own (`nflog-collector tls-cert` makes one), or the root of the private CA that
/// issues it (a certificate issued by another cannot anchor a chain here). Pin the next
/// certificate beside the current one before you rotate.
///
/// A collector that presents any other certificate is refused: the upload fails with
/// ``UploadError/untrustedCollector(_:)``, visible in ``Diagnostics/lastUploadError`` and logged at
/// error level; the events stay on the device, and uploads back off as after any failure.
public struct CertificatePinning: Sendable {
    let certificates: [NIOSSLCertificate]

    /// Certificates read from files, each PEM (one or more certificates) or DER.
    /// - Throws: ``ConfigurationError`` naming the file that holds no certificate.
    public init(contentsOf urls: [URL]) throws(ConfigurationError) {
        guard !urls.isEmpty else { throw .invalidField("pinned_certificate_files", reason: "must name at least one file") }
        var certificates: [NIOSSLCertificate] = []
        for url in urls {
            let bytes: [UInt8]
            do { bytes = Array(try Data(contentsOf: url)) } catch {
                throw .unreadableFile(path: url.path, reason: "the pinned certificate: \(error.localizedDescription)")
            }
            let parsed = (try? NIOSSLCertificate.fromPEMBytes(bytes)).flatMap { $0.isEmpty ? nil : $0 }
                ?? (try? NIOSSLCertificate(bytes: bytes, format: .der)).map { [$0] }
            guard let parsed else {
                throw .invalidField("pinned_certificate_files", reason: "\(url.path) holds no PEM or DER certificate")
            }
            certificates += parsed
        }
        self.certificates = certificates
    }

    /// Certificates given as PEM text (one or more).
    /// - Throws: ``ConfigurationError`` if the text holds no certificate.
    public init(pem: String) throws(ConfigurationError) {
        guard let parsed = try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)), !parsed.isEmpty else {
            throw .invalidField("pinning", reason: "holds no PEM certificate")
        }
        certificates = parsed
    }

    /// A transport that trusts only these certificates, for an app that wraps the SDK's
    /// transport in its own (``Configuration/transport``); otherwise set ``Configuration/pinning``.
    public func makeTransport(timeout: Duration = .seconds(30)) -> any HTTPTransport {
        PinnedTransport(pinning: self, timeout: timeout)
    }
}
