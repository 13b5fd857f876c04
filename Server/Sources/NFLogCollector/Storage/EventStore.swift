package import Foundation
@_spi(NFLogShared) package import NFLogSupport

/// What storing a batch did.
package struct StoreResult: Sendable, Equatable, Codable {
    /// Events and aggregates stored now.
    package let accepted: Int
    /// Events and aggregates dropped because one of the same kind with the same uuid was already
    /// stored for this app.
    package let duplicates: Int

    package init(accepted: Int, duplicates: Int) {
        self.accepted = accepted
        self.duplicates = duplicates
    }
}

/// One app's totals, as `GET /v1/stats` reports them. Every count only grows: events and
/// aggregates that retention dropped later still count in ``eventsStored``, ``eventsByName`` and
/// ``aggregatesStored``, and are counted again in ``eventsExpired`` and ``aggregatesExpired``
/// (so the ones kept now are the difference).
public struct CollectorStats: Sendable, Equatable, Codable {
    public let app: String
    /// Events stored since the store began, including those retention dropped since.
    public let eventsStored: Int
    public let duplicatesDropped: Int
    /// Distinct batch ids received.
    public let batches: Int
    /// Requests that stored a batch (retries of a batch count again here).
    public let requests: Int
    public let eventsByName: [String: Int]
    /// Spans the devices closed themselves (after a crash or the span timeout).
    public let abandonedSpans: Int
    /// Events the devices' rolling databases dropped before sending them, in total and by name.
    public let prunedOnDevices: Int
    public let prunedOnDevicesByName: [String: Int]
    /// Times a device found its database damaged and started afresh.
    public let databaseResets: Int
    /// Aggregates stored (each many events folded into one record; not in ``eventsStored``).
    public let aggregatesStored: Int
    /// Aggregates dropped because one with the same uuid was already stored.
    public let aggregateDuplicatesDropped: Int
    /// The events the stored aggregates fold, their `count`s summed (at most `Int64.max`).
    public let aggregatedEvents: Int
    /// Events dropped by retention (``EventStore/dropEvents(receivedBefore:)``), counted in
    /// ``eventsStored`` too.
    public let eventsExpired: Int
    /// Aggregates dropped by retention, counted in ``aggregatesStored`` too.
    public let aggregatesExpired: Int
    /// Events this collector refused for good that devices reported setting aside (quarantined).
    public let quarantinedOnDevices: Int
    /// The earliest and the latest device time of the data kept (Unix milliseconds): an event's
    /// timestamp (a span's start) or an aggregate's start; `nil` when nothing is kept. The span
    /// that holds the app's data, which the dashboard opens on.
    public let firstEventMilliseconds: Int64?
    public let lastEventMilliseconds: Int64?

    init(app: String, eventsStored: Int, duplicatesDropped: Int, batches: Int, requests: Int, eventsByName: [String: Int],
         abandonedSpans: Int, prunedOnDevices: Int, prunedOnDevicesByName: [String: Int], databaseResets: Int,
         aggregatesStored: Int, aggregateDuplicatesDropped: Int, aggregatedEvents: Int,
         eventsExpired: Int = 0, aggregatesExpired: Int = 0, quarantinedOnDevices: Int = 0,
         firstEventMilliseconds: Int64? = nil, lastEventMilliseconds: Int64? = nil) {
        self.app = app
        self.eventsStored = eventsStored
        self.duplicatesDropped = duplicatesDropped
        self.batches = batches
        self.requests = requests
        self.eventsByName = eventsByName
        self.abandonedSpans = abandonedSpans
        self.prunedOnDevices = prunedOnDevices
        self.prunedOnDevicesByName = prunedOnDevicesByName
        self.databaseResets = databaseResets
        self.aggregatesStored = aggregatesStored
        self.aggregateDuplicatesDropped = aggregateDuplicatesDropped
        self.aggregatedEvents = aggregatedEvents
        self.eventsExpired = eventsExpired
        self.aggregatesExpired = aggregatesExpired
        self.quarantinedOnDevices = quarantinedOnDevices
        self.firstEventMilliseconds = firstEventMilliseconds
        self.lastEventMilliseconds = lastEventMilliseconds
    }

    /// These totals with the span of the data kept.
    func spanning(first: Int64?, last: Int64?) -> CollectorStats {
        CollectorStats(app: app, eventsStored: eventsStored, duplicatesDropped: duplicatesDropped, batches: batches, requests: requests,
                       eventsByName: eventsByName, abandonedSpans: abandonedSpans, prunedOnDevices: prunedOnDevices,
                       prunedOnDevicesByName: prunedOnDevicesByName, databaseResets: databaseResets, aggregatesStored: aggregatesStored,
                       aggregateDuplicatesDropped: aggregateDuplicatesDropped, aggregatedEvents: aggregatedEvents,
                       eventsExpired: eventsExpired, aggregatesExpired: aggregatesExpired, quarantinedOnDevices: quarantinedOnDevices,
                       firstEventMilliseconds: first, lastEventMilliseconds: last)
    }

    /// The events kept now: stored and not yet dropped by retention.
    public var eventsKept: Int { max(eventsStored - eventsExpired, 0) }

    enum CodingKeys: String, CodingKey {
        case app, batches, requests
        case eventsStored = "events_stored"
        case duplicatesDropped = "duplicates_dropped"
        case eventsByName = "events_by_name"
        case abandonedSpans = "abandoned_spans"
        case prunedOnDevices = "pruned_on_devices"
        case prunedOnDevicesByName = "pruned_on_devices_by_name"
        case databaseResets = "database_resets"
        case aggregatesStored = "aggregates_stored"
        case aggregateDuplicatesDropped = "aggregate_duplicates_dropped"
        case aggregatedEvents = "aggregated_events"
        case eventsExpired = "events_expired"
        case aggregatesExpired = "aggregates_expired"
        case quarantinedOnDevices = "quarantined_on_devices"
        case firstEventMilliseconds = "first_event_ms"
        case lastEventMilliseconds = "last_event_ms"
    }
}

extension CollectorStats {
    /// Reads the aggregate, retention and quarantine totals as 0 when absent: stats written before they existed.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(app: try c.decode(String.self, forKey: .app),
                  eventsStored: try c.decode(Int.self, forKey: .eventsStored),
                  duplicatesDropped: try c.decode(Int.self, forKey: .duplicatesDropped),
                  batches: try c.decode(Int.self, forKey: .batches),
                  requests: try c.decode(Int.self, forKey: .requests),
                  eventsByName: try c.decode([String: Int].self, forKey: .eventsByName),
                  abandonedSpans: try c.decode(Int.self, forKey: .abandonedSpans),
                  prunedOnDevices: try c.decode(Int.self, forKey: .prunedOnDevices),
                  prunedOnDevicesByName: try c.decode([String: Int].self, forKey: .prunedOnDevicesByName),
                  databaseResets: try c.decode(Int.self, forKey: .databaseResets),
                  aggregatesStored: try c.decodeIfPresent(Int.self, forKey: .aggregatesStored) ?? 0,
                  aggregateDuplicatesDropped: try c.decodeIfPresent(Int.self, forKey: .aggregateDuplicatesDropped) ?? 0,
                  aggregatedEvents: try c.decodeIfPresent(Int.self, forKey: .aggregatedEvents) ?? 0,
                  eventsExpired: try c.decodeIfPresent(Int.self, forKey: .eventsExpired) ?? 0,
                  aggregatesExpired: try c.decodeIfPresent(Int.self, forKey: .aggregatesExpired) ?? 0,
                  quarantinedOnDevices: try c.decodeIfPresent(Int.self, forKey: .quarantinedOnDevices) ?? 0,
                  firstEventMilliseconds: try c.decodeIfPresent(Int64.self, forKey: .firstEventMilliseconds),
                  lastEventMilliseconds: try c.decodeIfPresent(Int64.self, forKey: .lastEventMilliseconds))
    }
}

/// Where the collector keeps events. The routes only talk to this protocol, so another database
/// (PostgreSQL, for several collectors sharing one store) can replace SQLite without touching them.
///
/// Everything is scoped by `app`, the app the request's key belongs to: one app's events never
/// count in another's stats, and the same uuid from two apps is two events.
package protocol EventStore: Sendable {
    /// Stores every event of the batch that is new for this app, in one transaction, and
    /// returns only after it committed. Events whose uuid is already stored are dropped and counted.
    func store(_ batch: Batch, app: String, receivedAt: Int64) async throws -> StoreResult
    /// The app's totals.
    func stats(app: String) async throws -> CollectorStats
    /// The analysis of the app's stored events and aggregates.
    func report(app: String) async throws -> AnalyticsReport
    /// The analysis of what `filter` selects: its time range and app version narrow every
    /// section, its dimension the aggregates (``ReportFilter``).
    func report(app: String, filter: ReportFilter) async throws -> AnalyticsReport
    /// The report over time: the app's events and aggregates in the query's range, bucket by
    /// bucket (``ReportSeries``), computed in memory that does not grow with them.
    func series(app: String, query: SeriesQuery) async throws -> ReportSeries
    /// Which of these event uuids the app has stored (each at most once, by construction).
    func storedIDs(app: String, among ids: [UUID]) async throws -> Set<UUID>
    /// The apps that have stored events.
    func apps() async throws -> [String]
    /// Every stored event (of one app, or all), oldest first, one JSON object per line.
    func exportEvents(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws
    /// Up to `limit` of the app's events with a row id after `after` (0: from the start), oldest first,
    /// as the export command's JSON lines; `last` is the row id of the last one, for the next page.
    func exportPage(app: String, after: Int64, limit: Int) async throws -> ExportPage
    /// Every stored aggregate (of one app, or all), oldest first, one JSON object per line.
    func exportAggregates(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws
    /// As ``exportPage(app:after:limit:)``, for aggregates: rows numbered apart from the events'.
    func exportAggregatePage(app: String, after: Int64, limit: Int) async throws -> ExportPage
    /// Commits a tiny write of the store's own, to tell whether a batch could be stored now:
    /// `/health` asks while writes are failing, to see when they can succeed again.
    func probeWrite() async throws
    /// Retention: drops every event the collector received before `cutoff` (Unix milliseconds of
    /// the collector's own clock when it stored the batch, `received_ms`, never the device's
    /// timestamps, which can be anything), with the aggregates received before it, and counts
    /// them in the app's `events_expired` and `aggregates_expired`. Returns how many events were
    /// dropped. Uploads keep being stored while it runs: SQLite deletes rows in bounded
    /// transactions; a store partitioned by day (PostgreSQL) may drop whole partitions only,
    /// keeping a day's events until all of that day is before the cutoff. An event whose uuid is
    /// sent again after it was dropped is stored again.
    func dropEvents(receivedBefore cutoff: Int64) async throws -> Int
    /// Rollup retention: drops the hourly rollups of every hour before `hour` (Unix hours of the
    /// devices' clocks), in transactions of at most a day of one app's rows, and returns how many
    /// rows went. The report then counts nothing before that hour.
    func dropRollups(hoursBefore hour: Int64) async throws -> Int
    /// Closes the store; later calls fail.
    func close() async
}
