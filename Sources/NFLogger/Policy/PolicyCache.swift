import Foundation

/// The last valid policy, kept on disk beside the database (`<database>.policy.json`) so the next
/// start applies it before the network answers. It stores the exact bytes received with their
/// ETag and signature, and is checked again when read (signature, schema, expiry).
struct PolicyCache: Sendable {
    let url: URL

    init(forDatabase database: URL) {
        url = database.deletingLastPathComponent().appendingPathComponent(database.lastPathComponent + ".policy.json")
    }

    struct Entry: Codable, Sendable {
        let body: String
        let etag: String?
        let signature: String?
        let fetchedAt: Date
    }

    func load() -> Entry? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try? decoder.decode(Entry.self, from: data)
    }

    func save(_ entry: Entry) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(entry).write(to: url, options: .atomic)
    }
}
