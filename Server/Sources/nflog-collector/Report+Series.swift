import ArgumentParser
import Foundation
import NFLogCollector

/// `report --series second|minute|hour|day`: the report over time (``ReportSeries``) instead of the report.
extension Report {
    func validateSeries() throws {
        guard series != nil else { return }
        if dimension != nil { throw ValidationError("--dimension does not apply to --series") }
        _ = try seriesQuery()
    }

    /// The series' query from `--series`, `--from`, `--to` and `--app-version` (defaults from the clock now);
    /// `nil` without `--series`.
    func seriesQuery() throws -> SeriesQuery? {
        guard let series else { return nil }
        guard let bucket = SeriesBucket(rawValue: series) else { throw ValidationError("--series must be one of \(SeriesBucket.names)") }
        do throws(SeriesQuery.Invalid) {
            return try SeriesQuery(bucket: bucket, from: from, to: to, appVersion: appVersion, now: Int64(Date().timeIntervalSince1970 * 1000))
        } catch {
            throw ValidationError("--\(error.parameter.replacingOccurrences(of: "_", with: "-")): \(error.message)")
        }
    }
}
