/// The width of one point of a ``ReportSeries``: an hour or a day of UTC, each starting at a
/// multiple of its length since the Unix epoch.
public enum SeriesBucket: String, Sendable, Equatable, Codable, CaseIterable {
    case hour
    case day

    /// Its length in milliseconds.
    public var milliseconds: Int64 {
        switch self {
        case .hour: 3_600_000
        case .day: 86_400_000
        }
    }

    /// How many buckets a series covers when it is given no `from`: a week of hours, about a
    /// quarter of days.
    public var defaultCount: Int64 {
        switch self {
        case .hour: 168
        case .day: 90
        }
    }

    /// The start of the bucket holding `time` (Unix milliseconds, at least 0).
    public func start(of time: Int64) -> Int64 {
        time / milliseconds * milliseconds
    }
}
