package import Foundation
import NIOSSL

/// A certificate file or key file a collector cannot serve HTTPS with, and why.
package struct CollectorTLSError: Error, Sendable, CustomStringConvertible {
    package let path: String
    package let reason: String
    package var description: String { "\(path): \(reason)" }
}

/// The certificate chain and private key a collector serves HTTPS with
/// (`nflog-collector serve --tls-cert FILE --tls-key FILE`).
///
/// Both files are PEM. The certificate file may hold a chain, leaf first. TLS 1.2 is the oldest
/// version accepted.
package struct CollectorTLS: Sendable {
    let configuration: TLSConfiguration

    /// Reads a PEM certificate chain and a PEM private key.
    /// - Throws: ``CollectorTLSError`` naming the file that cannot be used.
    package init(certificateFile: URL, privateKeyFile: URL) throws(CollectorTLSError) {
        func read(_ url: URL) throws(CollectorTLSError) -> [UInt8] {
            do { return Array(try Data(contentsOf: url)) } catch {
                throw CollectorTLSError(path: url.path, reason: "cannot be read (\(error.localizedDescription))")
            }
        }
        try self.init(certificatePEM: read(certificateFile), privateKeyPEM: read(privateKeyFile),
                      certificatePath: certificateFile.path, privateKeyPath: privateKeyFile.path)
    }

    /// A certificate chain and private key given as PEM text.
    package init(certificatePEM: String, privateKeyPEM: String) throws(CollectorTLSError) {
        try self.init(certificatePEM: Array(certificatePEM.utf8), privateKeyPEM: Array(privateKeyPEM.utf8),
                      certificatePath: "the certificate", privateKeyPath: "the private key")
    }

    private init(certificatePEM: [UInt8], privateKeyPEM: [UInt8], certificatePath: String, privateKeyPath: String)
        throws(CollectorTLSError) {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMBytes(certificatePEM) } catch {
            throw CollectorTLSError(path: certificatePath, reason: "is not a PEM certificate")
        }
        guard !chain.isEmpty else { throw CollectorTLSError(path: certificatePath, reason: "holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(bytes: privateKeyPEM, format: .pem) } catch {
            throw CollectorTLSError(path: privateKeyPath, reason: "is not a PEM private key")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        // A key that does not match the certificate would fail every handshake; find out now.
        do { _ = try NIOSSLContext(configuration: configuration) } catch {
            throw CollectorTLSError(path: privateKeyPath, reason: "does not match the certificate in \(certificatePath)")
        }
        self.configuration = configuration
    }
}
