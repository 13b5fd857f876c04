import Crypto
import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Seals event parameters with AES-256-GCM before they reach SQLite, and opens them to build an
/// upload. Each sealed value is bound (as authenticated data) to its event's id and to the column
/// it lives in, so a value copied to another row or column no longer opens.
///
/// Stored form: one format byte (1), then the 12-byte nonce, the ciphertext and the 16-byte tag.
struct ParameterCipher: Sendable {
    /// Which column a sealed value belongs to: part of its authenticated data.
    enum Slot: UInt8, Sendable {
        case parameters = 0x70      // "p": a point event's or a span start's parameters
        case endParameters = 0x65   // "e": a span end's parameters
        case quarantined = 0x71     // "q": a quarantined event's JSON
        case keyCheck = 0x6B        // "k": the database's key check
    }

    static let format: UInt8 = 1

    private let key: SymmetricKey

    init(key: EncryptionKey) {
        self.key = key.symmetricKey
    }

    func seal(_ plaintext: [UInt8], id: UUID, slot: Slot) throws(CipherError) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, authenticating: Self.associatedData(id, slot))
            guard let combined = box.combined else { throw CipherError.sealFailed }
            return [Self.format] + combined
        } catch {
            throw .sealFailed
        }
    }

    /// A keyed digest of `text` (HMAC-SHA-256, hex): equal texts give equal digests, which reveal
    /// nothing without the key. For values the database must compare but not show (an
    /// aggregate's dimension values, which are parameters).
    func digest(_ text: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("nflogger.series\u{0}".utf8) + Array(text.utf8), using: key)
        return Hex.encode(mac)
    }

    func open(_ sealed: [UInt8], id: UUID, slot: Slot) throws(CipherError) -> [UInt8] {
        guard sealed.first == Self.format else { throw .notSealed }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.dropFirst())
            return Array(try AES.GCM.open(box, using: key, authenticating: Self.associatedData(id, slot)))
        } catch {
            throw .authenticationFailed
        }
    }

    /// Whether `stored` is a value this key sealed for this row and column.
    func isSealed(_ stored: [UInt8], id: UUID, slot: Slot) -> Bool {
        (try? open(stored, id: id, slot: slot)) != nil
    }

    /// Sealed with the id `00…0` in a slot of its own: what the database keeps to tell, on open, whether
    /// this is the key it was encrypted with.
    func keyCheck() throws(CipherError) -> [UInt8] {
        try seal(Array(Self.keyCheckText.utf8), id: .nilUUID, slot: .keyCheck)
    }

    func verify(keyCheck: [UInt8]) -> Bool {
        (try? open(keyCheck, id: .nilUUID, slot: .keyCheck)) == Array(Self.keyCheckText.utf8)
    }

    private static let keyCheckText = "NFLogger encryption key check"

    private static func associatedData(_ id: UUID, _ slot: Slot) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) } + [slot.rawValue]
    }
}

/// Why a value could not be sealed or opened.
enum CipherError: Error, Sendable, CustomStringConvertible {
    case sealFailed
    case notSealed
    case authenticationFailed

    var description: String {
        switch self {
        case .sealFailed: "the parameters could not be encrypted"
        case .notSealed: "the stored value is not encrypted"
        case .authenticationFailed: "the stored value does not decrypt with the configured key (another key, or altered)"
        }
    }
}

extension ParameterCipher {
    /// ``seal(_:id:slot:)`` for a write: a failure fails the write as an SQLite error would.
    func sealForStorage(_ json: [UInt8], id: UUID, slot: Slot) throws(SQLiteError) -> [UInt8] {
        do { return try seal(json, id: id, slot: slot) } catch {
            throw SQLiteError(code: 1, message: "encryption: \(error)")
        }
    }
}
