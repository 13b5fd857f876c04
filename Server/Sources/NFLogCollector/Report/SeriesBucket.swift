/// The width of one point of a ``ReportSeries``: a second, a minute, an hour or a day of UTC,
/// each starting at a multiple of its length since the Unix epoch. Seconds and minutes are for
/// short spans of data (a demo's run, the last hour of a live app): the dashboard opens on the
/// span that holds an app's events, in the finest of these that keeps the bars readable.
package enum SeriesBucket: String, Sendable, Equatable, Codable, CaseIterable {
    case second
    case minute
    case hour
    case day

    /// Its length in milliseconds.
    package var milliseconds: Int64 {
        switch self {
        case .second: 1_000
        case .minute: 60_000
        case .hour: 3_600_000
        case .day: 86_400_000
        }
    }

    /// How many buckets a series covers when it is given no `from`: ten minutes of seconds, two
    /// hours of minutes, a week of hours, about a quarter of days.
    package var defaultCount: Int64 {
        switch self {
        case .second: 600
        case .minute: 120
        case .hour: 168
        case .day: 90
        }
    }

    /// The names, as the `bucket` parameter and `--series` take them.
    package static let names = allCases.map(\.rawValue).joined(separator: ", ")

    /// The start of the bucket holding `time` (Unix milliseconds, at least 0).
    package func start(of time: Int64) -> Int64 {
        time / milliseconds * milliseconds
    }
}
