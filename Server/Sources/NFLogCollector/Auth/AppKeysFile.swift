import Foundation

/// Adds app keys to a keys file, as `nflog-collector keygen --app APP --keys FILE` does: the file
/// gets the key's SHA-256, the caller gets the key, once.
package enum AppKeysFile {
    /// Makes a key for `app`, adds `{"app": app, "key_sha256": …}` to the keys file at `path`
    /// (created if missing, readable by its owner only) and returns the key itself, which is
    /// stored nowhere: hand it to the app's configuration.
    /// - Throws: ``AppKeysError`` if the existing file is not a valid keys file (it is then left
    ///   as it is) or cannot be replaced.
    package static func addKey(for app: String, to path: String) throws(AppKeysError) -> String {
        guard !app.isEmpty, app.utf8.count <= 256 else { throw AppKeysError(path: path, reason: "the app name must be 1…256 bytes") }
        let key = AppKeys.generateKey()
        try SecretsFileWriter.append(["app": app, "key_sha256": AppKeys.sha256Hex(of: key)], to: "keys", in: path) {
            url throws(AppKeysError) in _ = try AppKeys(contentsOf: url)
        }
        return key
    }

    /// Makes a read token for `scope`, adds `{"apps": …, "token_sha256": …}` to the read tokens
    /// file at `path` (created if missing, owner-only) and returns the token itself, once.
    /// - Throws: ``AppKeysError`` if the existing file is not a valid read tokens file (it is then
    ///   left as it is) or cannot be replaced.
    package static func addReadToken(for scope: ReadScope, to path: String) throws(AppKeysError) -> String {
        let apps: Any
        switch scope {
        case .allApps: apps = "*"
        case .apps(let names):
            guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
                throw AppKeysError(path: path, reason: "a read token needs one or more apps of 1…256 bytes, or *", kind: "read tokens file")
            }
            apps = names
        }
        let token = ReadTokens.generateToken()
        try SecretsFileWriter.append(["apps": apps, "token_sha256": ReadTokens.sha256Hex(of: token)], to: "tokens", in: path) {
            url throws(AppKeysError) in _ = try ReadTokens(contentsOf: url)
        }
        return token
    }
}
