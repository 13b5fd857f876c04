import Foundation

/// The install's stable id, for deterministic sampling: kept in a small file beside the
/// database (`<database>.install-id`), created on first use.
enum InstallID {
    static func fileURL(forDatabase database: URL) -> URL {
        database.deletingLastPathComponent().appendingPathComponent(database.lastPathComponent + ".install-id")
    }

    /// Reads the id, creating it if there is none. If the file cannot be written (a read-only
    /// directory), the id lives for this process only and sampling decisions may change at the
    /// next start; that is reported, not fatal.
    static func load(forDatabase database: URL) -> (id: String, persisted: Bool) {
        let url = fileURL(forDatabase: database)
        if let data = try? Data(contentsOf: url),
           let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
           !text.isEmpty, text.count <= 128 {
            return (text, true)
        }
        let id = UUID().uuidString.lowercased()
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(id.utf8).write(to: url, options: .atomic)
            return (id, true)
        } catch {
            return (id, false)
        }
    }
}
