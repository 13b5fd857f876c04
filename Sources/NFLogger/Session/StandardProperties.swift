import Foundation

/// The properties attached to every event, captured once per process: who sent it (SDK), from
/// which app build, on which OS, in which locale. Stored once per distinct value, not per event.
struct StandardProperties: Sendable, Equatable, Codable {
    var sdkName: String
    var sdkVersion: String
    var appID: String
    var appVersion: String
    var osName: String
    var osVersion: String
    var locale: String

    enum CodingKeys: String, CodingKey {
        case sdkName = "sdk_name", sdkVersion = "sdk_version", appID = "app_id", appVersion = "app_version"
        case osName = "os_name", osVersion = "os_version", locale
    }

    init(appID: String, appVersion: String) {
        sdkName = NFLogger.sdkName
        sdkVersion = NFLogger.sdkVersion
        self.appID = appID
        self.appVersion = appVersion
        osName = Self.platform.name
        osVersion = Self.platform.version
        locale = Self.platform.locale
    }

    /// The platform half, read once per process (reading the locale and OS version is not free).
    private static let platform: (name: String, version: String, locale: String) = {
        #if os(iOS)
        let name = "iOS"
        #elseif os(macOS)
        let name = "macOS"
        #elseif os(Linux)
        let name = "Linux"
        #else
        let name = "unknown"
        #endif
        let v = ProcessInfo.processInfo.operatingSystemVersion
        let identifier = Locale.current.identifier
        return (name, clamp("\(v.majorVersion).\(v.minorVersion).\(v.patchVersion)"), clamp(identifier.isEmpty ? "und" : identifier))
    }()

    /// The protocol allows 64 bytes for these; cut at a character boundary.
    private static func clamp(_ text: String) -> String {
        guard text.utf8.count > 64 else { return text }
        var result = ""
        for character in text {
            if result.utf8.count + character.utf8.count > 64 { break }
            result.append(character)
        }
        return result
    }

    /// A canonical JSON text (sorted keys), so equal properties share one stored row.
    func canonicalJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
