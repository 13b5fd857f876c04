import Crypto
import Foundation

/// The SHA-256 digests of the secrets a collector accepts (app keys, read tokens), and the one way
/// a presented secret is matched against them.
///
/// Only digests are kept, so neither a leaked file nor a memory dump hands out a secret that
/// works. ``index(of:)`` is constant time in the secret's content and in which entry matches.
struct SecretDigests: Sendable {
    /// Entry `i`'s digest is bytes `32i ..< 32i + 32`: one flat array, so a lookup walks
    /// fixed-size digests with no per-entry indirection.
    private let bytes: [UInt8]
    let count: Int

    static let digestBytes = SHA256.byteCount

    /// - Precondition of use: no digest appears twice (the files' readers refuse duplicates), so at
    ///   most one entry matches.
    init(_ digests: [[UInt8]]) {
        bytes = digests.flatMap { $0 }
        count = digests.count
    }

    /// The position of the entry the secret matches, or `nil`.
    ///
    /// The secret is hashed, then compared with every stored digest, all 32 bytes of each, by
    /// XOR-accumulation, with no early exit and no branch on the bytes. A timing probe learns
    /// nothing about the stored secrets (it could learn the number of entries, which is not secret).
    func index(of secret: String) -> Int? {
        let presented = Self.digest(of: secret)
        // entry + 1 of the match, 0 for none.
        var found = 0
        for entry in 0..<count {
            var difference: UInt8 = 0
            for byte in 0..<Self.digestBytes {
                difference |= bytes[entry * Self.digestBytes + byte] ^ presented[byte]
            }
            // 1 when difference is 0, else 0: only 0 borrows into the high byte when 1 is subtracted.
            let equal = Int((UInt16(difference) &- 1) >> 8) & 1
            found |= equal * (entry + 1)
        }
        return found == 0 ? nil : found - 1
    }

    /// The SHA-256 of a secret's UTF-8 bytes.
    static func digest(of secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(secret.utf8)))
    }

    /// A new random secret: 32 bytes from the system's secure generator, base64url without
    /// padding (43 characters) after a prefix that makes it recognisable in a leak scan.
    static func generate(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let base64 = Data(random).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return prefix + base64
    }
}
