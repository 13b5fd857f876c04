public import Foundation

/// A snapshot of what a logger has done and holds, from ``NFLogger/diagnostics(completion:)``.
public struct Diagnostics: Sendable, CustomStringConvertible {
    /// The mode in force when the snapshot was taken.
    public let mode: LogMode
    /// Logging calls (events and span ends) completed with each status since the logger started.
    public let recorded: Int
    public let filtered: Int
    public let disabled: Int
    public let failed: Int
    /// Calls waiting in memory for the database (the queue depth).
    public let pendingInMemory: Int
    /// Point events stored in the database, waiting for upload.
    public let storedPointEvents: Int
    /// Spans stored in the database, ended or not.
    public let storedSpanEvents: Int
    /// Spans started but not yet ended.
    public let openSpans: Int
    /// Stored events ready for upload, including the batch in flight (open spans are not ready).
    /// A closed aggregate counts as one; an open one is not ready.
    public let waitingForUpload: Int
    /// Events the collector confirmed since the logger started (an aggregate counts as one).
    public let uploadedEvents: Int
    /// Batches the collector confirmed since the logger started.
    public let uploadedBatches: Int
    /// Upload attempts that failed and will be retried, since the logger started.
    public let retriedUploads: Int
    /// Events the collector refused for good, set aside in the database.
    public let quarantinedEvents: Int
    /// Why the last upload failed, if it did and none has succeeded since.
    public let lastUploadError: UploadError?
    /// When the next upload will be tried after a failure.
    public let nextUploadAttempt: Date?
    /// Events the rolling database dropped (oldest or lowest priority first, beyond its limits)
    /// since the logger started; the counts by name go to the collector with the next batch.
    public let prunedEvents: Int
    /// Spans closed as abandoned (their process crashed, or they passed the span timeout)
    /// since the logger started.
    public let abandonedSpans: Int
    /// The user's consent when the snapshot was taken.
    public let consent: Consent
    /// Events held while consent was pending and deleted when it was denied, since the logger started.
    public let consentDeletedEvents: Int
    /// The policy in force: where it came from, and how the last check went.
    public let policy: PolicyStatus
    /// The last storage error, if the last write failed.
    public let lastStorageError: StorageError?
    /// Each database moved aside since the logger started (damaged, or encrypted with another key
    /// or none), with why and where: its events are kept in that file, and the collector is told.
    public let databaseResets: [String]
    /// The database file.
    public let databasePath: String
    /// Aggregates stored (open or closed, waiting for upload), and the events folded into them
    /// (a policy's `rules.aggregate`). Each aggregate is one row for the database's limits.
    public var storedAggregates: Int = 0
    public var aggregatedEvents: Int = 0
    /// Events folded into an overflow series since the logger started, because their name and
    /// window already had the rule's `max_series` series.
    public var aggregateOverflowEvents: Int = 0
    /// Messages from web content a ``ScriptBridge`` refused because their page sent too many.
    public var webMessagesRateLimited: Int = 0
    /// Each output's own figures, the collector's first (see <doc:FiltersAndOutputs>).
    public var outputs: [OutputDiagnostics] = []

    public var description: String {
        var lines = [
            "mode: \(mode)",
            "calls: \(recorded) recorded, \(filtered) filtered, \(disabled) disabled, \(failed) failed",
            "stored: \(storedPointEvents) point events, \(storedSpanEvents) spans (\(openSpans) open) in \(databasePath)",
            "aggregated: \(aggregatedEvents) events in \(storedAggregates) aggregates\(aggregateOverflowEvents > 0 ? ", \(aggregateOverflowEvents) into overflow series" : "")",
            "pruned: \(prunedEvents) events dropped by the limits, \(abandonedSpans) spans abandoned",
            "consent: \(consent)\(consentDeletedEvents > 0 ? ", \(consentDeletedEvents) held events deleted" : "")",
            "upload: \(uploadedEvents) events in \(uploadedBatches) batches, \(waitingForUpload) waiting, \(retriedUploads) retries, \(quarantinedEvents) quarantined",
        ]
        if let lastUploadError { lines.append("last upload error: \(lastUploadError)") }
        lines.append("policy: \(policy.source.rawValue)\(policy.etag.map { " \($0)" } ?? "")\(policy.lastError.map { ", last problem: \($0)" } ?? "")")
        if let lastStorageError { lines.append("last storage error: \(lastStorageError)") }
        for reset in databaseResets { lines.append("database reset: \(reset)") }
        for output in outputs where outputs.count > 1 || output.id != "collector" { lines.append("output \(output)") }
        return lines.joined(separator: "\n")
    }
}
