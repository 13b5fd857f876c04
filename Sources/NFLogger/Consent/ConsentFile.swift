import Foundation

/// The consent the app last set, in a small file beside the database (`<database>.consent`),
/// read when a logger starts: the facade needs it before the database is open.
enum ConsentFile {
    static func fileURL(forDatabase database: URL) -> URL {
        database.deletingLastPathComponent().appendingPathComponent(database.lastPathComponent + ".consent")
    }

    /// The saved consent, or `nil` if the app never set one (or the file is unreadable).
    static func load(forDatabase database: URL) -> Consent? {
        guard let data = try? Data(contentsOf: fileURL(forDatabase: database)) else { return nil }
        return Consent(rawValue: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Saves it atomically (a rename), so a crash leaves the old value or the new one.
    static func save(_ consent: Consent, forDatabase database: URL) throws {
        let url = fileURL(forDatabase: database)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(consent.rawValue.utf8).write(to: url, options: .atomic)
    }
}
