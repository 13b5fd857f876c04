import Crypto
import Foundation
import SwiftASN1
import X509
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A self-signed certificate and its private key, for a collector on a private network or in
/// tests (`nflog-collector tls-cert`). Apps pin it with the SDK's `CertificatePinning`.
///
/// The key is P-256; the certificate names every host given as a subject alternative name
/// (IP addresses as IP addresses), so hostname verification passes for each of them.
package struct SelfSignedCertificate: Sendable {
    /// The certificate, PEM.
    package let certificatePEM: String
    /// The private key, PEM (PKCS#8). Keep it secret.
    package let privateKeyPEM: String

    /// Generates a new key and certificate.
    /// - Parameters:
    ///   - hosts: DNS names and IP addresses the certificate is for, such as `["localhost", "127.0.0.1"]`.
    ///   - validity: how long from now it is valid.
    /// - Throws: ``CollectorTLSError`` if `hosts` is empty or a name cannot be encoded.
    package init(hosts: [String], validity: Duration = .seconds(365 * 86_400)) throws(CollectorTLSError) {
        guard let first = hosts.first else { throw CollectorTLSError(path: "hosts", reason: "name at least one host") }
        let key = P256.Signing.PrivateKey()
        let now = Date()
        do {
            let name = try DistinguishedName { CommonName(first) }
            let addresses = hosts.compactMap(Self.ipAddressBytes)
            let names = hosts.filter { Self.ipAddressBytes($0) == nil }
            let alternativeNames = SubjectAlternativeNames(
                names.map { .dnsName($0) } + addresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) })
            // It is its own issuer, so it must be allowed to sign; the constraints keep it from
            // vouching for any name but its own should someone add it to a system trust store
            // ("invalid" is a reserved name nothing real has, when it names no DNS host).
            let constraints = NameConstraints(
                permittedDNSDomains: names.isEmpty ? ["invalid"] : names,
                permittedIPRanges: (addresses.isEmpty ? [[0, 0, 0, 0]] : addresses).map { address in
                    ASN1OctetString(contentBytes: ArraySlice(address + Array(repeating: 0xFF, count: address.count)))
                })
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PublicKey(key.publicKey),
                notValidBefore: now.addingTimeInterval(-300),  // tolerate a little clock skew
                notValidAfter: now.addingTimeInterval(Double(validity.components.seconds)),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                    Critical(constraints)
                    try ExtendedKeyUsage([.serverAuth])
                    alternativeNames
                },
                issuerPrivateKey: Certificate.PrivateKey(key))
            certificatePEM = try certificate.serializeAsPEM().pemString
        } catch {
            throw CollectorTLSError(path: "hosts", reason: "cannot make a certificate for \(hosts) (\(error))")
        }
        privateKeyPEM = key.pemRepresentation
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address, or `nil` for a DNS name.
    static func ipAddressBytes(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
