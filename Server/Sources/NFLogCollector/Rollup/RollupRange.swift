/// Which rollup rows and which raw events a time range reads: the whole hours inside it from the
/// rollups, and the parts of an hour at either end (a range that starts or ends within an hour)
/// from the events themselves, so a report over any range in milliseconds counts exactly what it
/// did before rollups, reading at most two hours of events.
struct RollupRange: Sendable, Equatable {
    /// The whole hours read from the rollups: `from` inclusive, `to` exclusive, `nil` unbounded;
    /// `nil` when no whole hour is in the range.
    let hours: Hours?
    /// Ranges of device time, in milliseconds (`from` inclusive, `to` exclusive), each within one
    /// hour, read from the events.
    let edges: [Edge]

    struct Hours: Sendable, Equatable {
        let from: Int64?
        let to: Int64?
    }

    struct Edge: Sendable, Equatable {
        let from: Int64
        let to: Int64
    }

    /// Timestamps are never negative, and none reaches this: bounds past it are clamped, so no
    /// arithmetic below can overflow.
    static let latest: Int64 = 1 << 60

    init(from: Int64?, to: Int64?) {
        let hour = HourlyRollup.hourMilliseconds
        let from = from.map { min(max($0, 0), Self.latest) }
        let to = to.map { min(max($0, 0), Self.latest) }
        if let from, let to, from >= to {
            hours = nil
            edges = []
            return
        }
        // The first whole hour at or after `from`, the end of the last one before `to`.
        let firstHour = from.map { ($0 + hour - 1) / hour }
        let endHour = to.map { $0 / hour }
        var edges: [Edge] = []
        var lowEnd: Int64?
        if let from, let firstHour, from % hour != 0 {
            let end = min(firstHour * hour, to ?? Int64.max)
            edges.append(Edge(from: from, to: end))
            lowEnd = end
        }
        if let to, let endHour, to % hour != 0 {
            let start = max(endHour * hour, lowEnd ?? 0, from ?? 0)
            if start < to { edges.append(Edge(from: start, to: to)) }
        }
        self.edges = edges
        if let firstHour, let endHour, firstHour >= endHour {
            hours = nil
        } else {
            hours = Hours(from: firstHour, to: endHour)
        }
    }
}
