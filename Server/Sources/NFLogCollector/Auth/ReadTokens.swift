package import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The read tokens a collector accepts: the credential for stats, reports, lookups and exports,
/// apart from the app keys that upload (an app key ships inside every copy of the app, so it must
/// not read the app's analytics).
///
/// Only the SHA-256 of each token is kept, and a presented token is matched in constant time, as
/// app keys are (``SecretDigests``). The read tokens file (`--read-tokens FILE`) is JSON;
/// `nflog-collector keygen --read-token SCOPE --read-tokens FILE` adds an entry and prints the
/// token once:
/// ```json
/// { "tokens": [ { "apps": ["com.example.shop"], "token_sha256": "…(64 hex digits)" },
///               { "apps": "*", "token_sha256": "…" } ] }
/// ```
/// `apps` is a list of one or more apps, or `"*"` for every app.
///
/// In development mode (no keys file, loopback only) the collector accepts `dev-read-token` for
/// app `dev`, the app of `dev-key`.
package struct ReadTokens: Sendable {
    /// `true` for the built-in development token.
    package let isDevelopment: Bool
    private let digests: SecretDigests
    private let scopes: [ReadScope]

    /// Only `dev-read-token`, for app `dev`.
    package static let development = ReadTokens(isDevelopment: true, entries: [(SecretDigests.digest(of: WireProtocol.developmentReadToken), .apps(["dev"]))])
    /// No token: nothing can be read over HTTP (the CLI's `report` and `export` still read the file).
    package static let none = ReadTokens(isDevelopment: false, entries: [])

    private init(isDevelopment: Bool, entries: [(digest: [UInt8], scope: ReadScope)]) {
        self.isDevelopment = isDevelopment
        self.digests = SecretDigests(entries.map(\.digest))
        self.scopes = entries.map(\.scope)
    }

    /// Tokens given in code: token → the apps it reads. Only their digests are kept.
    package init(_ scopesByToken: [String: ReadScope]) {
        self.init(isDevelopment: false, entries: scopesByToken.map { (SecretDigests.digest(of: $0.key), $0.value) })
    }

    /// Reads a read tokens file.
    /// - Throws: ``AppKeysError`` naming the entry that is wrong.
    package init(contentsOf url: URL) throws(AppKeysError) {
        func fail(_ reason: String) -> AppKeysError { AppKeysError(path: url.path, reason: reason, kind: "read tokens file") }
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw fail("cannot be read: \(error.localizedDescription)") }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["tokens"] as? [Any] else {
            throw fail("must be a JSON object with a \"tokens\" array")
        }
        let developmentDigest = SecretDigests.digest(of: WireProtocol.developmentReadToken)
        var entries: [(digest: [UInt8], scope: ReadScope)] = []
        var seen: Set<[UInt8]> = []
        for (index, item) in list.enumerated() {
            guard let entry = item as? [String: Any],
                  let hex = entry["token_sha256"] as? String,
                  let digest = Hex.decode(hex, byteCount: SecretDigests.digestBytes) else {
                throw fail("tokens[\(index)] must be an object with \"token_sha256\" (the token's SHA-256, 64 hex digits, as keygen writes it) and \"apps\"")
            }
            let scope: ReadScope
            switch entry["apps"] {
            case let star as String where star == "*":
                scope = .allApps
            case let apps as [Any]:
                let names = apps.compactMap { $0 as? String }
                guard !names.isEmpty, names.count == apps.count, names.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
                    throw fail("tokens[\(index)].apps must be \"*\" or a non-empty list of app names (1…256 bytes each)")
                }
                scope = .apps(names)
            default:
                throw fail("tokens[\(index)].apps must be \"*\" or a non-empty list of app names")
            }
            guard digest != developmentDigest else {
                throw fail("tokens[\(index)] is the public development token dev-read-token; make a real one with: nflog-collector keygen --read-token APP --read-tokens FILE")
            }
            guard seen.insert(digest).inserted else { throw fail("tokens[\(index)]: the same token is listed twice") }
            entries.append((digest, scope))
        }
        self.init(isDevelopment: false, entries: entries)
    }

    /// How many tokens are accepted.
    package var count: Int { scopes.count }

    /// What a token may read, or `nil` if it is not accepted.
    package func scope(forToken token: String) -> ReadScope? {
        digests.index(of: token).map { scopes[$0] }
    }

    /// A new random read token: 32 random bytes, base64url, after a `nfr_` prefix (app keys
    /// start `nfk_`), so a leak scan tells the two apart.
    package static func generateToken() -> String { SecretDigests.generate(prefix: "nfr_") }

    /// The SHA-256 of a token in lowercase hex, as the file's `token_sha256` holds it.
    package static func sha256Hex(of token: String) -> String { Hex.encode(SecretDigests.digest(of: token)) }
}
