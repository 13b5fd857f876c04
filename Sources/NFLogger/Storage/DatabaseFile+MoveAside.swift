import Foundation
@_spi(NFLogShared) import NFLogSupport

/// A file that cannot be used (damaged, or sealed with another key) is moved aside, never
/// deleted: its events may still be recovered, by hand or with the right key.
extension DatabaseFile {
    /// The errors that mean the file itself is damaged (as opposed to full, busy or unreadable).
    static func isCorruption(_ error: SQLiteError) -> Bool {
        error.primaryCode == 11 /* CORRUPT */ || error.primaryCode == 26 /* NOTADB */ || error.message.hasPrefix("quick_check: ")
    }

    /// Moves the file (and its log) to `<path>.<suffix>-<UTC time>`, counting what it held if it
    /// still can. Every connection to it must be closed first.
    /// - Returns: the reason to report: `what`, where the file went and how many events it held.
    func moveAside(suffix: String, what: String) -> String {
        let lost = countEventsIfReadable()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        let aside = path + ".\(suffix)-" + formatter.string(from: Date())
        let files = FileManager.default
        for suffix in ["", "-wal"] where files.fileExists(atPath: path + suffix) {
            try? files.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        try? files.removeItem(atPath: path + "-shm")  // derived from the WAL; rebuilt on open
        var reason = "\(what); moved aside to \((aside as NSString).lastPathComponent)"
        if let lost { reason += "; it held \(lost) events" }
        return reason
    }

    /// How many events a damaged file still lets us count, if any.
    private func countEventsIfReadable() -> Int? {
        guard let connection = try? SQLiteConnection(path: path, busyTimeoutMilliseconds: 100),
              let points = try? connection.scalarInt("SELECT count(*) FROM point_events"),
              let spans = try? connection.scalarInt("SELECT count(*) FROM span_events") else { return nil }
        return Int(points + spans)
    }
}
