import Crypto
public import Foundation
@_spi(NFLogShared) import NFLogSupport

/// A 256-bit AES key for encrypting event parameters at rest (``Configuration/encryptionKey``).
///
/// Keep it out of the database's directory, ideally in the platform's keychain. Its description
/// never shows the key.
public struct EncryptionKey: Sendable, CustomStringConvertible {
    let symmetricKey: SymmetricKey

    /// A key from exactly 32 bytes.
    public init(bytes: some Collection<UInt8>) throws(ConfigurationError) {
        guard bytes.count == 32 else {
            throw .invalidField("encryption_key", reason: "must be 32 bytes (AES-256), got \(bytes.count)")
        }
        symmetricKey = SymmetricKey(data: Array(bytes))
    }

    /// A key read from a file holding 32 raw bytes, or their base64 or hex on one line
    /// (`openssl rand -base64 32 > key` makes one).
    public init(contentsOf url: URL) throws(ConfigurationError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw .unreadableFile(path: url.path, reason: "the encryption key: \(error.localizedDescription)")
        }
        if data.count == 32 {
            try self.init(bytes: data)
            return
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let raw = Data(base64Encoded: text), raw.count == 32 {
            try self.init(bytes: raw)
        } else if let raw = Hex.decode(text, byteCount: 32) {
            try self.init(bytes: raw)
        } else {
            throw .invalidField("encryption_key_file", reason: "\(url.path) must hold 32 bytes, raw or as base64 or hex")
        }
    }

    /// A new random key.
    public static func generate() -> EncryptionKey {
        EncryptionKey(symmetricKey: SymmetricKey(size: .bits256))
    }

    /// The key's 32 bytes as base64, to store it (`EncryptionKey(contentsOf:)` reads this form).
    public var base64: String {
        symmetricKey.withUnsafeBytes { Data($0).base64EncodedString() }
    }

    public var description: String { "EncryptionKey(256 bits, redacted)" }

    private init(symmetricKey: SymmetricKey) {
        self.symmetricKey = symmetricKey
    }
}
