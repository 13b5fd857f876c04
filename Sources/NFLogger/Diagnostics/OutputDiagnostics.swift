@_spi(NFLogShared) import NFLogSupport

/// One output's figures in ``Diagnostics/outputs``.
public struct OutputDiagnostics: Sendable, Equatable, CustomStringConvertible {
    /// The output's id (`collector` for the collector at ``Configuration/uploadURL``).
    public let id: String
    /// Durable (tracked in SQLite, retried) or best effort.
    public let isDurable: Bool
    /// `false` while the policy switches it off (`outputs.disabled`).
    public let isEnabled: Bool
    /// Durable: events on the device it is still owed (ready or in one of its batches).
    public let waiting: Int
    /// Durable: events it confirmed since the logger started (an aggregate counts as one).
    /// Best effort: events it was handed.
    public let delivered: Int
    /// Durable: failed attempts since the logger started, retried.
    public let retries: Int
    /// Events the rolling database dropped before this output had them, since the logger started.
    public let pruned: Int
    /// Durable: why its last delivery failed, if it did and none has succeeded since.
    public let lastError: UploadError?

    public var description: String {
        guard isDurable else { return "\(id): best effort, \(delivered) handed\(isEnabled ? "" : ", disabled by the policy")" }
        return "\(id): \(delivered) delivered, \(waiting) waiting, \(retries) retries, \(pruned) pruned"
            + (isEnabled ? "" : ", disabled by the policy") + (lastError.map { ", last error: \($0)" } ?? "")
    }

    /// Every output's, on the RequestManager's queue: the durable outputs' (the collector's
    /// first), then the best-effort ones'.
    static func all(_ uploaders: [Uploader], bestEffort: [(id: String, enabled: Bool, handed: Int)],
                    database: DatabaseManager) -> [OutputDiagnostics] {
        let pruned = database.prunedByOutput
        var all: [OutputDiagnostics] = uploaders.map { uploader in
            let waiting = (try? database.withOutbox(uploader.outputID) { (outbox) throws(SQLiteError) in try outbox.waitingCount() }) ?? 0
            return OutputDiagnostics(id: uploader.outputID, isDurable: true, isEnabled: uploader.isEnabled, waiting: waiting,
                                     delivered: uploader.uploadedEvents, retries: uploader.retriedAttempts,
                                     pruned: pruned[uploader.outputID] ?? 0, lastError: uploader.lastError)
        }
        all += bestEffort.map {
            OutputDiagnostics(id: $0.id, isDurable: false, isEnabled: $0.enabled, waiting: 0, delivered: $0.handed, retries: 0,
                              pruned: 0, lastError: nil)
        }
        return all
    }
}
