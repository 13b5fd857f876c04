import ArgumentParser
import Foundation
import NFLogCollector

/// `nflog-collector tls-cert`: a self-signed certificate for `serve --tls-cert/--tls-key`,
/// which apps then pin (`CertificatePinning`, or `nflog-demo --pin-cert`).
struct TLSCert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tls-cert",
        abstract: "Make a self-signed certificate and key for serve --tls-cert/--tls-key; apps pin the certificate.")

    @Option(name: .customLong("host"), help: "A DNS name or IP address the certificate is for (repeatable).")
    var hosts: [String] = ["localhost", "127.0.0.1", "::1"]

    @Option(help: "Where to write the certificate (PEM).")
    var cert: String

    @Option(help: "Where to write the private key (PEM, readable by its owner only).")
    var key: String

    @Option(help: "Days the certificate is valid.")
    var days: Int = 365

    func validate() throws {
        guard (1...3_650).contains(days) else { throw ValidationError("--days must be between 1 and 3650") }
    }

    func run() throws {
        for path in [cert, key] where FileManager.default.fileExists(atPath: path) {
            throw ValidationError("\(path) exists; refusing to overwrite it")
        }
        let generated = try SelfSignedCertificate(hosts: hosts, validity: .seconds(days * 86_400))
        try SecretFile.create(key, contents: generated.privateKeyPEM)
        do { try Data(generated.certificatePEM.utf8).write(to: URL(fileURLWithPath: cert), options: .withoutOverwriting) } catch {
            throw ValidationError("cannot write \(cert) (it may exist; refusing to overwrite)")
        }
        print("certificate written to \(cert) (for \(hosts.joined(separator: ", ")), valid \(days) days)")
        print("private key written to \(key)")
    }
}
