import Crypto
import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Checks the detached Ed25519 signature a collector sends with a policy (`X-NFLog-Signature`,
/// base64 of the 64-byte signature over the exact body bytes).
///
/// It fails closed: a configured key that is not a usable Ed25519 key verifies nothing.
struct PolicyVerifier: Sendable {
    static let header = WireProtocol.signatureHeader
    private let key: Curve25519.Signing.PublicKey?

    init(publicKey: Data) {
        key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
    }

    func verify(_ body: Data, signature: String?) throws(PolicyError) {
        guard let signature, !signature.isEmpty else { throw .unsigned }
        guard let key, let bytes = Data(base64Encoded: signature.trimmingCharacters(in: .whitespaces)),
              key.isValidSignature(bytes, for: body) else { throw .badSignature }
    }
}
