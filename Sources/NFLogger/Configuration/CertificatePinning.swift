public import Foundation

/// The certificates the SDK trusts for the collector, in place of the system's trust store
/// (``Configuration/Network/pinning``).
///
/// With pinning, uploads and policy fetches trust only these certificates, and the collector's
/// chain must lead to one of them; hostnames are still checked. On Linux the SDK's transport
/// (async-http-client) takes them as its only trust roots; on Apple platforms URLSession's
/// server-trust evaluation anchors on them alone. Pin a self-signed certificate: the collector's
/// own (`nflog-collector tls-cert` makes one), or the root of the private CA that issues it (a
/// certificate issued by another cannot anchor a chain on Linux). Pin the next certificate
/// beside the current one before you rotate.
///
/// A collector that presents any other certificate is refused: the upload fails with
/// ``UploadError/untrustedCollector(_:)``, visible in ``Diagnostics/lastUploadError`` and logged at
/// error level; the events stay on the device, and uploads back off as after any failure.
public struct CertificatePinning: Sendable {
    /// Each certificate's DER bytes: what both platforms' TLS stacks take.
    let derCertificates: [[UInt8]]

    /// Certificates read from files, each PEM (one or more certificates) or DER.
    /// - Throws: ``ConfigurationError`` naming the file that holds no certificate.
    public init(contentsOf urls: [URL]) throws(ConfigurationError) {
        guard !urls.isEmpty else { throw .invalidField("pinned_certificate_files", reason: "must name at least one file") }
        var certificates: [[UInt8]] = []
        for url in urls {
            let bytes: [UInt8]
            do { bytes = Array(try Data(contentsOf: url)) } catch {
                throw .unreadableFile(path: url.path, reason: "the pinned certificate: \(error.localizedDescription)")
            }
            let parsed = Self.pemCertificates(bytes) ?? (Self.isCertificate(bytes) ? [bytes] : nil)
            guard let parsed else {
                throw .invalidField("pinned_certificate_files", reason: "\(url.path) holds no PEM or DER certificate")
            }
            certificates += parsed
        }
        derCertificates = certificates
    }

    /// Certificates given as PEM text (one or more).
    /// - Throws: ``ConfigurationError`` if the text holds no certificate.
    public init(pem: String) throws(ConfigurationError) {
        guard let parsed = Self.pemCertificates(Array(pem.utf8)) else {
            throw .invalidField("pinning", reason: "holds no PEM certificate")
        }
        derCertificates = parsed
    }

    /// A transport that trusts only these certificates, for an app that wraps the SDK's
    /// transport in its own (``Configuration/Network/transport``); otherwise set
    /// ``Configuration/Network/pinning``.
    /// - Parameter timeout: how long one request may take, in seconds (as
    ///   ``DefaultHTTPTransport/init(timeout:pinning:)`` takes it).
    public func makeTransport(timeout: TimeInterval = 30) -> any HTTPTransport {
        DefaultHTTPTransport(timeout: timeout, pinning: self)
    }

    /// The DER bytes of every `CERTIFICATE` block in PEM text, or `nil` when there is none or
    /// one does not decode to a certificate.
    static func pemCertificates(_ bytes: [UInt8]) -> [[UInt8]]? {
        let text = String(decoding: bytes, as: UTF8.self)
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        var certificates: [[UInt8]] = []
        var rest = text[...]
        while let start = rest.range(of: begin), let stop = rest[start.upperBound...].range(of: end) {
            let base64 = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(base64)).map(Array.init), isCertificate(der) else { return nil }
            certificates.append(der)
            rest = rest[stop.upperBound...]
        }
        return certificates.isEmpty ? nil : certificates
    }

    /// Whether the bytes are one DER certificate, as the platform's TLS stack reads it.
    static func isCertificate(_ der: [UInt8]) -> Bool {
        platformCertificate(der) != nil
    }
}
