/// What a ``ReportSeries`` covers: events whose device `timestamp`, and aggregates whose `start`,
/// is in `from ..< to` (Unix milliseconds), cut into ``SeriesBucket``s, optionally only those of
/// one app version.
///
/// Made only through ``init(bucket:from:to:appVersion:now:)``, which fills in the defaults and
/// refuses a range that is empty or too long, so a store never receives one.
package struct SeriesQuery: Sendable, Equatable {
    package let bucket: SeriesBucket
    /// Inclusive, Unix milliseconds.
    package let from: Int64
    /// Exclusive, Unix milliseconds; after ``from``.
    package let to: Int64
    /// Only events and aggregates whose context's `app_version` is this.
    package let appVersion: String?

    /// The most buckets a series may cover: its points, and each measure's, stay a bounded list.
    package static let maxBuckets: Int64 = 2_000

    /// Why a query was refused: the parameter at fault (its HTTP name) and what is wrong with it.
    package struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// `from`, `to` or `app_version`.
        package let parameter: String
        package let message: String
        package var description: String { message }
    }

    /// - Parameters:
    ///   - to: default: the end of the bucket that holds `now` (`now` rounded up to the bucket,
    ///     so the current bucket is in).
    ///   - from: default: ``SeriesBucket/defaultCount`` buckets before `to` (not before 0).
    ///   - appVersion: 1 to 256 bytes.
    ///   - now: the collector's clock, Unix milliseconds.
    /// - Throws: ``Invalid`` when `from` or `to` is negative, `from` is not before `to`, the range
    ///   touches more than ``maxBuckets`` buckets, or `appVersion` is empty or too long.
    package init(bucket: SeriesBucket = .hour, from: Int64? = nil, to: Int64? = nil, appVersion: String? = nil,
                now: Int64) throws(Invalid) {
        let width = bucket.milliseconds
        if let from, from < 0 { throw Invalid(parameter: "from", message: "from must be Unix milliseconds, at least 0") }
        if let to, to < 0 { throw Invalid(parameter: "to", message: "to must be Unix milliseconds, at least 0") }
        // The end of now's bucket: at most Int64.max / width + 1 buckets, so no overflow.
        let end = to ?? (bucket.start(of: min(max(now, 0), Int64.max - width)) + width)
        let start = from ?? max(0, end - bucket.defaultCount * width)
        guard start < end else {
            // Name the one the caller gave: with `to` left out, `from` is what is wrong.
            throw to == nil ? Invalid(parameter: "from", message: "from must be before to (by default the end of the current \(bucket.rawValue))")
                            : Invalid(parameter: "to", message: "to must be after from")
        }
        // The buckets from the one holding `from` to the one holding the last millisecond.
        let buckets = (end - 1) / width - start / width + 1
        guard buckets <= Self.maxBuckets else {
            throw Invalid(parameter: "from", message: "from and to span \(buckets) \(bucket.rawValue)s; at most \(Self.maxBuckets) may be asked for at once")
        }
        if let appVersion, !(1...256).contains(appVersion.utf8.count) {
            throw Invalid(parameter: "app_version", message: "app_version must be 1 to 256 bytes")
        }
        self.bucket = bucket
        self.from = start
        self.to = end
        self.appVersion = appVersion
    }

    /// How many buckets the range touches (at most ``maxBuckets``).
    package var bucketCount: Int64 { (to - 1) / bucket.milliseconds - from / bucket.milliseconds + 1 }
}
