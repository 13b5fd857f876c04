import Crypto
package import Foundation
@_spi(NFLogShared) import NFLogSupport

/// A keys file that cannot be used, with the reason.
package struct AppKeysError: Error, Sendable, Equatable, CustomStringConvertible {
    package let path: String
    package let reason: String
    /// What the file is, as the message names it: "keys file" (`--keys`) or "read tokens file"
    /// (`--read-tokens`).
    package var kind = "keys file"
    package var description: String { "\(kind) \(path): \(reason)" }
}

/// The app keys a collector accepts, each naming the app its events belong to.
///
/// Only the SHA-256 of each key is kept, in the keys file and in memory, so neither a leaked keys
/// file nor a memory dump hands out a key that uploads. A presented key is hashed and compared
/// with every stored hash in constant time (see ``app(forKey:)``).
///
/// The keys file (`--keys FILE`) is JSON; `nflog-collector keygen --app APP --keys FILE` adds an
/// entry and prints the key once, for the app's configuration:
/// ```json
/// { "keys": [ { "app": "com.example.shop", "key_sha256": "5f0c…(64 hex digits)" } ] }
/// ```
/// An entry may still hold the key itself (`"key": "…"`, the format before hashing): it is hashed
/// when read and listed in ``plaintextEntries`` so that `serve` can tell the operator to convert it.
///
/// Without a file the collector runs in development mode and accepts only `dev-key` (app `dev`).
package struct AppKeys: Sendable {
    /// An entry of a keys file that holds its key in plaintext rather than as `key_sha256`.
    package struct PlaintextEntry: Sendable, Equatable {
        /// Its position in the file's `keys` array.
        package let index: Int
        package let app: String
        /// What to write instead of `"key"`: the key's SHA-256 in hex.
        package let keySHA256: String
    }

    /// `true` for the built-in development key.
    package let isDevelopment: Bool
    /// Entries of the file read that still hold a plaintext key (legacy format), in file order.
    package let plaintextEntries: [PlaintextEntry]
    private let digests: SecretDigests
    private let apps: [String]

    /// Only `dev-key`, for app `dev`.
    package static let development = AppKeys(isDevelopment: true, entries: [(digest(of: WireProtocol.developmentKey), "dev")])

    private init(isDevelopment: Bool, entries: [(digest: [UInt8], app: String)], plaintextEntries: [PlaintextEntry] = []) {
        self.isDevelopment = isDevelopment
        self.digests = SecretDigests(entries.map(\.digest))
        self.apps = entries.map(\.app)
        self.plaintextEntries = plaintextEntries
    }

    /// Keys given in code: key → app. The keys are hashed at once; only their digests are kept.
    package init(_ appsByKey: [String: String]) {
        self.init(isDevelopment: false, entries: appsByKey.map { (Self.digest(of: $0.key), $0.value) })
    }

    /// Reads a keys file.
    /// - Throws: ``AppKeysError`` naming the entry that is wrong.
    package init(contentsOf url: URL) throws(AppKeysError) {
        func fail(_ reason: String) -> AppKeysError { AppKeysError(path: url.path, reason: reason) }
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw fail("cannot be read: \(error.localizedDescription)") }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["keys"] as? [Any] else {
            throw fail("must be a JSON object with a \"keys\" array")
        }
        guard !list.isEmpty else { throw fail("\"keys\" is empty: no app could upload") }
        let developmentDigest = Self.digest(of: WireProtocol.developmentKey)
        var entries: [(digest: [UInt8], app: String)] = []
        var plaintext: [PlaintextEntry] = []
        var seen: Set<[UInt8]> = []
        for (index, item) in list.enumerated() {
            guard let entry = item as? [String: Any], let app = entry["app"] as? String else {
                throw fail("keys[\(index)] must be an object with a string field \"app\" and either \"key_sha256\" (the key's SHA-256, 64 hex digits) or \"key\"")
            }
            guard !app.isEmpty, app.utf8.count <= 256 else { throw fail("keys[\(index)].app must be 1…256 bytes") }
            let digest: [UInt8]
            switch (entry["key_sha256"], entry["key"]) {
            case (let hex as String, nil):
                guard let decoded = Hex.decode(hex, byteCount: SecretDigests.digestBytes) else {
                    throw fail("keys[\(index)].key_sha256 must be 64 hex digits (the SHA-256 of the key, as keygen writes it)")
                }
                digest = decoded
            case (nil, let key as String):
                guard key.utf8.count >= 8, key.utf8.count <= 256 else { throw fail("keys[\(index)].key must be 8…256 bytes") }
                digest = Self.digest(of: key)
                plaintext.append(PlaintextEntry(index: index, app: app, keySHA256: Hex.encode(digest)))
            case (_?, _?):
                throw fail("keys[\(index)] has both \"key\" and \"key_sha256\": keep only \"key_sha256\"")
            default:
                throw fail("keys[\(index)] must have a string field \"key_sha256\" (the key's SHA-256, 64 hex digits) or \"key\"")
            }
            // Everyone knows dev-key: a file that lists it would open a public collector to anyone.
            guard digest != developmentDigest else {
                throw fail("keys[\(index)] is the public development key dev-key; make a real key with: nflog-collector keygen --app APP --keys FILE")
            }
            guard seen.insert(digest).inserted else { throw fail("keys[\(index)]: the same key is listed twice") }
            entries.append((digest, app))
        }
        self.init(isDevelopment: false, entries: entries, plaintextEntries: plaintext)
    }

    /// How many keys are accepted.
    package var count: Int { apps.count }

    /// The app a key belongs to, or `nil` if the key is not accepted.
    package func app(forKey key: String) -> String? {
        index(forKey: key).map { apps[$0] }
    }

    /// The app of entry `index` (from ``index(forKey:)``).
    func app(at index: Int) -> String { apps[index] }

    /// The position of the entry a key matches, or `nil`; constant time (``SecretDigests``).
    func index(forKey key: String) -> Int? { digests.index(of: key) }

    /// The SHA-256 of a key's UTF-8 bytes.
    static func digest(of key: String) -> [UInt8] { SecretDigests.digest(of: key) }

    /// The SHA-256 of a key in lowercase hex, as the keys file's `key_sha256` holds it.
    package static func sha256Hex(of key: String) -> String {
        Hex.encode(digest(of: key))
    }

    /// A new random app key: 32 random bytes, base64url without padding (43 characters) after
    /// a `nfk_` prefix that makes it recognisable in a leak scan.
    package static func generateKey() -> String { SecretDigests.generate(prefix: "nfk_") }
}
