import Foundation
import NFLogCollector
import NFLogCollectorTesting

/// A collector a test runs in-process and talks to over HTTP: a ``TestCollector`` (SQLite), or a
/// ``RunningCollector`` over either store (``StoreKind/startCollector(configuration:logger:readTimeLimit:)``).
package protocol CollectorUnderTest: Sendable {
    /// The base URL, such as `http://127.0.0.1:43117`.
    var url: URL { get }
    /// The port it listens on.
    var port: Int { get }
    /// Where batches go: `url` + `/v1/events`.
    var eventsURL: URL { get }
    /// The test app's totals.
    func stats() async throws -> CollectorStats
    /// Every stored event of every app, in the order they were stored, typed.
    func exportedEvents() async throws -> [ExportedEvent]
    /// Every stored aggregate of every app, in the order they were stored, typed.
    func exportedAggregates() async throws -> [ExportedAggregate]
    /// The test app's report.
    func report(filter: ReportFilter) async throws -> AnalyticsReport
    /// Stops serving and closes the store.
    func stop() async
}


extension TestCollector: CollectorUnderTest {}
extension RunningCollector: CollectorUnderTest {}
