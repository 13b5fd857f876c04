import Foundation
import NFLogSupport

/// A keys file that cannot be used, with the reason.
public struct AppKeysError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "keys file \(path): \(reason)" }
}

/// The app keys a collector accepts, each naming the app its events belong to.
///
/// The keys file (`--keys FILE`) is JSON:
/// ```json
/// { "keys": [ { "app": "com.example.shop", "key": "k-7f3c9a1e5b2d4f60" } ] }
/// ```
/// Without a file the collector runs in development mode and accepts only `dev-key` (app `dev`).
public struct AppKeys: Sendable {
    /// `true` for the built-in development key.
    public let isDevelopment: Bool
    private let appsByKey: [String: String]

    /// Only `dev-key`, for app `dev`.
    public static let development = AppKeys(isDevelopment: true, appsByKey: [WireProtocol.developmentKey: "dev"])

    private init(isDevelopment: Bool, appsByKey: [String: String]) {
        self.isDevelopment = isDevelopment
        self.appsByKey = appsByKey
    }

    /// Keys given in code: key → app.
    public init(_ appsByKey: [String: String]) {
        self.init(isDevelopment: false, appsByKey: appsByKey)
    }

    /// Reads a keys file.
    /// - Throws: ``AppKeysError`` naming the entry that is wrong.
    public init(contentsOf url: URL) throws(AppKeysError) {
        func fail(_ reason: String) -> AppKeysError { AppKeysError(path: url.path, reason: reason) }
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw fail("cannot be read: \(error.localizedDescription)") }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let entries = root["keys"] as? [Any] else {
            throw fail("must be a JSON object with a \"keys\" array")
        }
        guard !entries.isEmpty else { throw fail("\"keys\" is empty: no app could upload") }
        var apps: [String: String] = [:]
        for (index, entry) in entries.enumerated() {
            guard let entry = entry as? [String: Any], let app = entry["app"] as? String, let key = entry["key"] as? String else {
                throw fail("keys[\(index)] must be an object with string fields \"app\" and \"key\"")
            }
            guard !app.isEmpty, app.utf8.count <= 256 else { throw fail("keys[\(index)].app must be 1…256 bytes") }
            guard key.utf8.count >= 8, key.utf8.count <= 256 else { throw fail("keys[\(index)].key must be 8…256 bytes") }
            guard apps.updateValue(app, forKey: key) == nil else { throw fail("keys[\(index)].key is listed twice") }
        }
        self.init(isDevelopment: false, appsByKey: apps)
    }

    /// The app a key belongs to, or `nil` if the key is not accepted.
    public func app(forKey key: String) -> String? {
        appsByKey[key]
    }
}
