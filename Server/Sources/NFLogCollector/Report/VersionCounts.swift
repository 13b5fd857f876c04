/// The report's `versions`: how many events each app version and each SDK version logged, the
/// most first (ties by version, in byte order), at most ``maxListed`` of each.
public struct VersionCounts: Sendable, Equatable, Codable {
    /// By the context's `app_version`.
    public let app: [App]
    /// By the batch's `sdk` name and version.
    public let sdk: [SDK]

    /// How many versions of each kind are listed.
    public static let maxListed = 100

    public struct App: Sendable, Equatable, Codable {
        public let version: String
        public let events: Int

        public init(version: String, events: Int) {
            self.version = version
            self.events = events
        }
    }

    public struct SDK: Sendable, Equatable, Codable {
        public let name: String
        public let version: String
        public let events: Int

        public init(name: String, version: String, events: Int) {
            self.name = name
            self.version = version
            self.events = events
        }
    }

    public init(app: [App] = [], sdk: [SDK] = []) {
        self.app = app
        self.sdk = sdk
    }
}

extension VersionCounts {
    /// The text report's line: the five most logging of each kind; `nil` when there are none.
    var line: String? {
        guard !app.isEmpty || !sdk.isEmpty else { return nil }
        func list(_ items: [String]) -> String {
            items.prefix(5).joined(separator: ", ") + (items.count > 5 ? " and \(items.count - 5) more" : "")
        }
        return "Versions: app \(list(app.map { "\($0.version) (\($0.events))" })) · SDK \(list(sdk.map { "\($0.name) \($0.version) (\($0.events))" }))"
    }
}
