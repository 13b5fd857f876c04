public import Foundation

/// What storing a batch did.
public struct StoreResult: Sendable, Equatable, Codable {
    /// Events stored now.
    public let accepted: Int
    /// Events dropped because an event with the same uuid was already stored for this app.
    public let duplicates: Int

    public init(accepted: Int, duplicates: Int) {
        self.accepted = accepted
        self.duplicates = duplicates
    }
}

/// One app's totals, as `GET /v1/stats` reports them.
public struct CollectorStats: Sendable, Equatable, Codable {
    public let app: String
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

    enum CodingKeys: String, CodingKey {
        case app, batches, requests
        case eventsStored = "events_stored"
        case duplicatesDropped = "duplicates_dropped"
        case eventsByName = "events_by_name"
        case abandonedSpans = "abandoned_spans"
        case prunedOnDevices = "pruned_on_devices"
        case prunedOnDevicesByName = "pruned_on_devices_by_name"
        case databaseResets = "database_resets"
    }
}

/// Where the collector keeps events. The routes only talk to this protocol, so another database
/// (PostgreSQL, for several collectors sharing one store) can replace SQLite without touching them.
///
/// Everything is scoped by `app`, the app the request's key belongs to: one app's events never
/// count in another's stats, and the same uuid from two apps is two events.
public protocol EventStore: Sendable {
    /// Stores every event of the batch that is new for this app, in one transaction, and
    /// returns only after it committed. Events whose uuid is already stored are dropped and counted.
    func store(_ batch: Batch, app: String, receivedAt: Int64) async throws -> StoreResult
    /// The app's totals.
    func stats(app: String) async throws -> CollectorStats
    /// The analysis of the app's stored events.
    func report(app: String) async throws -> AnalyticsReport
    /// Which of these event uuids the app has stored (each at most once, by construction).
    func storedIDs(app: String, among ids: [UUID]) async throws -> Set<UUID>
    /// The apps that have stored events.
    func apps() async throws -> [String]
    /// Every stored event (of one app, or all), oldest first, one JSON object per line.
    func exportEvents(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws
    /// Up to `limit` of the app's events with a row id after `after` (0: from the start), oldest first,
    /// as the export command's JSON lines; `last` is the row id of the last one, for the next page.
    func exportPage(app: String, after: Int64, limit: Int) async throws -> ExportPage
    /// Commits a tiny write of the store's own, to tell whether a batch could be stored now:
    /// `/health` asks while writes are failing, to see when they can succeed again.
    func probeWrite() async throws
    /// Closes the store; later calls fail.
    func close() async
}
