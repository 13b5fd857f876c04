import Foundation
import Logging

/// Compacts a store's past days into the daily rollups (``RollupDays``): the days before today
/// (UTC, by this machine's clock) now, then every hour until the task is cancelled; says in the
/// log when a pass compacted any, and warns (trying again an hour later) when one failed.
enum RollupCompactionLoop {
    static func run(logger: Logger, compact: (_ before: Int64) async throws -> Int) async {
        while !Task.isCancelled {
            let hour = Int64(Date().timeIntervalSince1970 * 1_000) / HourlyRollup.hourMilliseconds
            do {
                let days = try await compact(RollupDays.start(ofHour: hour))
                if days > 0 { logger.info("the daily rollups hold every day before today", metadata: ["days_compacted": "\(days)"]) }
            } catch {
                if Task.isCancelled { return }
                logger.warning("compacting the hourly rollups into days failed; tried again in an hour", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(3_600))
        }
    }
}
