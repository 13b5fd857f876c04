import Foundation

/// Adds app keys to a keys file, as `nflog-collector keygen --app APP --keys FILE` does: the file
/// gets the key's SHA-256, the caller gets the key, once.
public enum AppKeysFile {
    /// Makes a key for `app`, adds `{"app": app, "key_sha256": …}` to the keys file at `path`
    /// (created if missing, readable by its owner only) and returns the key itself, which is
    /// stored nowhere: hand it to the app's configuration.
    /// - Throws: ``AppKeysError`` if the existing file is not a valid keys file (it is then left
    ///   as it is) or cannot be replaced.
    public static func addKey(for app: String, to path: String) throws(AppKeysError) -> String {
        func fail(_ reason: String) -> AppKeysError { AppKeysError(path: path, reason: reason) }
        guard !app.isEmpty, app.utf8.count <= 256 else { throw fail("the app name must be 1…256 bytes") }
        let url = URL(fileURLWithPath: path)
        var root: [String: Any] = [:]
        if FileManager.default.fileExists(atPath: path) {
            // Read as the collector will, so a file that serve would refuse is never extended.
            _ = try AppKeys(contentsOf: url)
            guard let data = FileManager.default.contents(atPath: path),
                  let existing = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw fail("cannot be read")
            }
            root = existing
        }
        let key = AppKeys.generateKey()
        root["keys"] = (root["keys"] as? [Any] ?? []) + [["app": app, "key_sha256": AppKeys.sha256Hex(of: key)]]
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw fail("cannot be written as JSON: \(error.localizedDescription)")
        }
        try replace(url, with: data + Data("\n".utf8))
        return key
    }

    /// Writes a new owner-only file beside `url` and renames it over `url`: a crash leaves the old
    /// file or the new one, never half of one, and a collector never reads a partial file.
    private static func replace(_ url: URL, with data: Data) throws(AppKeysError) {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw AppKeysError(path: url.path, reason: "cannot write \(temporary.lastPathComponent) beside it")
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw AppKeysError(path: url.path, reason: "cannot be replaced")
        }
    }
}
