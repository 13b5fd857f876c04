import Crypto
import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Finds the policy to serve an app: `DIR/<app>.json`, else `DIR/default.json`. Files are read on
/// every request, so an operator's edit takes effect at once, without a restart.
struct PolicyFiles: Sendable {
    let directory: URL
    /// Served as is (the SDK refuses policies over 64 KiB); this only bounds what is read.
    static let maxBytes = 1 << 20

    /// A policy file to serve: its name, its bytes, and when it was last modified (`nil` if the
    /// file system does not say).
    struct Served: Sendable {
        let name: String
        let data: Data
        let modified: Date?
    }

    /// The file to serve, or `nil` if there is no policy for this app.
    /// A file that is not a valid policy, checked by the very parser every device runs (a
    /// half-saved edit, a typo, an expired `expires_at`), is an error: never served, never signed.
    func policy(for app: String) throws(PolicyFileError) -> Served? {
        let candidates = (Self.isSafeFileName(app) ? [app + ".json"] : []) + ["default.json"]
        for name in candidates {
            let url = directory.appendingPathComponent(name)
            // Absent means "try the next one"; present but unreadable is an error, never a
            // silent fallback to the default policy.
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            let handle: FileHandle
            do { handle = try FileHandle(forReadingFrom: url) } catch { throw PolicyFileError.unreadable(name) }
            defer { try? handle.close() }
            let data: Data
            do { data = try handle.read(upToCount: Self.maxBytes + 1) ?? Data() } catch { throw PolicyFileError.unreadable(name) }
            guard data.count <= Self.maxBytes else { throw PolicyFileError.tooLarge(name) }
            do { _ = try PolicyDocument.parse(data) } catch { throw PolicyFileError.invalid(name, error.description) }
            // Read after the bytes: an edit in between dates these bytes later than they are, never earlier.
            let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
            return Served(name: name, data: data, modified: modified)
        }
        return nil
    }

    /// App names come from the operator's keys file, but are still kept out of path tricks.
    static func isSafeFileName(_ app: String) -> Bool {
        !app.isEmpty && !app.hasPrefix(".") && app.utf8.count <= 200
            && app.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
    }

    /// A strong ETag: the first 128 bits of the SHA-256 of the bytes, as 32 hex digits in quotes
    /// (docs/PROTOCOL.md): it changes whenever the content does, and 128 bits is plenty for that.
    static func etag(_ data: Data) -> String {
        "\"" + Hex.encode(SHA256.hash(data: data).prefix(16)) + "\""
    }

    /// Whether an `If-None-Match` header names this ETag (or `*`); weak forms match too.
    static func matches(_ header: String?, etag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == "*" || tag == etag
        }
    }
}

enum PolicyFileError: Error {
    case tooLarge(String)
    case unreadable(String)
    case invalid(String, String)

    /// For the error body and the log: the file's name, never its path.
    var message: String {
        switch self {
        case .tooLarge(let name): "the policy file \(name) is too large to serve"
        case .unreadable(let name): "the policy file \(name) cannot be read"
        case .invalid(let name, let reason): "the policy file \(name) is not a valid policy, so it is not served: \(reason)"
        }
    }

    /// The file it is about, for logging each broken file once per interval.
    var file: String {
        switch self {
        case .tooLarge(let name), .unreadable(let name), .invalid(let name, _): name
        }
    }
}
