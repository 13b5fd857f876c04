/// A snapshot of what a logger has done and holds, from ``NFLogger/diagnostics(completion:)``.
public struct Diagnostics: Sendable, CustomStringConvertible {
    /// The mode in force when the snapshot was taken.
    public let mode: LogMode
    /// Logging calls (events and span ends) completed with each status since the logger started.
    public let recorded: Int
    public let filtered: Int
    public let disabled: Int
    public let failed: Int
    /// Point events stored in the database, waiting for upload.
    public let storedPointEvents: Int
    /// Spans stored in the database, ended or not.
    public let storedSpanEvents: Int
    /// Spans started but not yet ended.
    public let openSpans: Int
    /// The last storage error, if the last write failed.
    public let lastStorageError: StorageError?
    /// The database file.
    public let databasePath: String

    public var description: String {
        var lines = [
            "mode: \(mode)",
            "calls: \(recorded) recorded, \(filtered) filtered, \(disabled) disabled, \(failed) failed",
            "stored: \(storedPointEvents) point events, \(storedSpanEvents) spans (\(openSpans) open) in \(databasePath)",
        ]
        if let lastStorageError { lines.append("last storage error: \(lastStorageError)") }
        return lines.joined(separator: "\n")
    }
}
