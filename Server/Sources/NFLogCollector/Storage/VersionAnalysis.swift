@_spi(NFLogShared) import NFLogSupport

/// The report's `versions` (events by app version and by SDK version) and, when a filter selects
/// the events, the counts the running totals would otherwise give: the matching events and their
/// names.
///
/// Without a filter the versions come from `context_counts` (migration 10), the running count of
/// each context's events kept by every commit, so the report reads no events for them; with one,
/// from one grouped pass over the matching events, through events_hours (the range's hours; all
/// the app's, in hour order, for an app version alone, rather than in the random order of the
/// (app, uuid) index, which SQLite otherwise takes: on make-report-db's 1,000,000 events, 1.3 s
/// where this takes 0.23 s). Either way SQL groups the events per context
/// and hands back one row per name, app version and SDK version, the versions in (most events,
/// version) order, of which the walk keeps ``VersionCounts/maxListed`` of each.
enum VersionAnalysis {
    /// The matching events, counted when a filter selects them.
    struct Matching: Sendable, Equatable {
        var events = 0
        var byName: [String: Int] = [:]
    }

    /// The three parts of the query's rows, in the order it numbers them.
    enum Part: Int64 {
        case name = 0, app, sdk
    }

    /// Gathers the rows of either store's query, in their order.
    struct Collector {
        private(set) var matching = Matching()
        private var app: [VersionCounts.App] = []
        private var sdk: [VersionCounts.SDK] = []

        mutating func add(part: Part, _ first: String, _ second: String, events: Int) {
            switch part {
            case .name:
                matching.events += events
                matching.byName[first, default: 0] += events
            case .app:
                if app.count < VersionCounts.maxListed { app.append(.init(version: first, events: events)) }
            case .sdk:
                if sdk.count < VersionCounts.maxListed { sdk.append(.init(name: first, version: second, events: events)) }
            }
        }

        var versions: VersionCounts { VersionCounts(app: app, sdk: sdk) }
    }

    /// Reads in the caller's transaction (the report's snapshot). `matching` is `nil` when the
    /// selection selects every event (the totals count them).
    static func analyse(_ c: SQLiteConnection, app: String,
                        selection: SQLiteReportSelection) throws(SQLiteError) -> (matching: Matching?, versions: VersionCounts) {
        let versions = """
            SELECT 1 AS part, c.app_version AS first, '' AS second, sum(per.n) AS events
            FROM per JOIN contexts c ON c.id = per.context_id GROUP BY c.app_version
            UNION ALL
            SELECT 2, c.sdk_name, c.sdk_version, sum(per.n) FROM per JOIN contexts c ON c.id = per.context_id
            GROUP BY c.sdk_name, c.sdk_version
            """
        let sql: String
        if selection.selectsEvents {
            sql = """
                WITH scan AS MATERIALIZED (
                    SELECT context_id, name, count(*) AS n FROM events INDEXED BY events_hours WHERE app = ?1\(selection.events())
                    GROUP BY context_id, name
                ),
                per AS (SELECT context_id, sum(n) AS n FROM scan GROUP BY context_id)
                SELECT 0, name, '', sum(n) FROM scan GROUP BY name
                UNION ALL
                \(versions)
                ORDER BY 1, 4 DESC, 2, 3
                """
        } else {
            sql = """
                WITH per AS (SELECT k.context_id, k.events AS n FROM context_counts k JOIN contexts c ON c.id = k.context_id WHERE c.app = ?1)
                \(versions)
                ORDER BY 1, 4 DESC, 2, 3
                """
        }
        let rows = try c.prepare(sql)
        try selection.bind(rows, app: app)
        defer { rows.reset() }
        var collector = Collector()
        while try rows.step() {
            guard let part = Part(rawValue: rows.int64(at: 0)) else { continue }
            collector.add(part: part, rows.text(at: 1) ?? "", rows.text(at: 2) ?? "", events: Int(rows.int64(at: 3)))
        }
        return (selection.selectsEvents ? collector.matching : nil, collector.versions)
    }
}

extension CollectorStats {
    /// These totals with the event counts of a filtered report: the matching events, their
    /// names and their abandoned spans (the rest, such as batches, duplicates and what devices
    /// reported about themselves, stays the app's).
    func counting(_ matching: VersionAnalysis.Matching, abandonedSpans: Int) -> CollectorStats {
        CollectorStats(app: app, eventsStored: matching.events, duplicatesDropped: duplicatesDropped, batches: batches,
                       requests: requests, eventsByName: matching.byName, abandonedSpans: abandonedSpans,
                       prunedOnDevices: prunedOnDevices, prunedOnDevicesByName: prunedOnDevicesByName,
                       databaseResets: databaseResets, aggregatesStored: aggregatesStored,
                       aggregateDuplicatesDropped: aggregateDuplicatesDropped, aggregatedEvents: aggregatedEvents,
                       quarantinedOnDevices: quarantinedOnDevices)
    }
}
