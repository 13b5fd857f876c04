import Crypto
import Foundation
import NFLogSupport

/// Checks the detached Ed25519 signature a collector sends with a policy (`X-NFLog-Signature`,
/// base64 of the 64-byte signature over the exact body bytes).
struct PolicyVerifier: Sendable {
    static let header = WireProtocol.signatureHeader
    private let key: Curve25519.Signing.PublicKey

    /// - Returns: `nil` if the bytes are not a valid Ed25519 public key.
    init?(publicKey: Data) {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return nil }
        self.key = key
    }

    func verify(_ body: Data, signature: String?) throws(PolicyError) {
        guard let signature, !signature.isEmpty else { throw .unsigned }
        guard let bytes = Data(base64Encoded: signature.trimmingCharacters(in: .whitespaces)),
              key.isValidSignature(bytes, for: body) else { throw .badSignature }
    }
}
