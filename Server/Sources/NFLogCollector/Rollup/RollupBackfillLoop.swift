import Logging

/// What one step of a store's rollup backfill did.
enum RollupBackfillStep: Sendable, Equatable {
    /// Every event stored before the rollups is in them.
    case done
    /// Another collector holds the backfill (PostgreSQL).
    case busy
    /// `added` events went in; about `remaining` row ids are left.
    case added(Int, remaining: Int64)
}

/// Steps a store's backfill (``SQLiteRollupBackfill``, ``PostgresRollupBackfill``) until it is
/// done or the task is cancelled, and says how far it got in the log: once when it starts adding,
/// every 100,000 events or so, and when done. While another collector holds it, or after a failed
/// step (whose cursor did not move), it tries again a second later.
enum RollupBackfillLoop {
    static func run(logger: Logger, step: () async throws -> RollupBackfillStep) async {
        var added = 0
        var logged = 0
        var announced = false
        while !Task.isCancelled {
            do {
                switch try await step() {
                case .done:
                    if announced { logger.info("the hourly rollups hold every stored event", metadata: ["added": "\(added)"]) }
                    return
                case .busy:
                    try? await Task.sleep(for: .seconds(1))
                case .added(let count, let remaining):
                    if !announced {
                        announced = true
                        logger.info("adding the events stored before the hourly rollups to them, beside uploads")
                    }
                    added += count
                    if added - logged >= 100_000 {
                        logged = added
                        logger.info("adding stored events to the hourly rollups",
                                    metadata: ["added": "\(added)", "row_ids_left": "\(remaining)"])
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("adding stored events to the hourly rollups failed; retried in 1 s", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
