import Foundation

/// A fresh directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("nflog-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Where a test's SDK database goes.
    public var databaseURL: URL { url.appendingPathComponent("events.sqlite") }

    /// A file (or folder) of this name inside the directory; nothing is created.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}
