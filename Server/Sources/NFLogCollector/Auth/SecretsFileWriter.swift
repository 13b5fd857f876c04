import Foundation

/// Adds one entry to a JSON file of secret digests (the keys file, the read tokens file): the file
/// is read as the collector will read it first, then replaced whole, owner-only.
enum SecretsFileWriter {
    /// Appends `entry` to the array `arrayKey` of the file at `path` (created if missing).
    /// - Parameter check: reads an existing file as the collector would, so a file that `serve`
    ///   would refuse is never extended.
    static func append(_ entry: [String: Any], to arrayKey: String, in path: String,
                       check: (URL) throws(AppKeysError) -> Void) throws(AppKeysError) {
        let kind = arrayKey == "tokens" ? "read tokens file" : "keys file"
        func fail(_ reason: String) -> AppKeysError { AppKeysError(path: path, reason: reason, kind: kind) }
        let url = URL(fileURLWithPath: path)
        var root: [String: Any] = [:]
        if FileManager.default.fileExists(atPath: path) {
            try check(url)
            guard let data = FileManager.default.contents(atPath: path),
                  let existing = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw fail("cannot be read")
            }
            root = existing
        }
        root[arrayKey] = (root[arrayKey] as? [Any] ?? []) + [entry]
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw fail("cannot be written as JSON: \(error.localizedDescription)")
        }
        try replace(url, with: data + Data("\n".utf8), kind: kind)
    }

    /// Writes a new owner-only file beside `url` and renames it over `url`: a crash leaves the old
    /// file or the new one, never half of one, and a collector never reads a partial file.
    private static func replace(_ url: URL, with data: Data, kind: String) throws(AppKeysError) {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw AppKeysError(path: url.path, reason: "cannot write \(temporary.lastPathComponent) beside it", kind: kind)
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw AppKeysError(path: url.path, reason: "cannot be replaced", kind: kind)
        }
    }
}
