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

/// How long a test waits for an outcome (a delivery, a row, a closed connection) before calling it
/// a hang. Not a margin: the outcome is what is checked, and a loaded machine (the suite in
/// parallel on two cores beside other work) may take many times longer than an idle one; only
/// something stuck takes this long.
package let hangLimit: Duration = .seconds(300)

/// ``hangLimit`` in seconds: the request timeout of the tests' HTTP clients, which would otherwise
/// give up on a collector that a loaded machine makes slow to answer (and send again).
package let hangLimitSeconds = TimeInterval(hangLimit.components.seconds)

extension TestCollector: CollectorUnderTest {}
extension RunningCollector: CollectorUnderTest {}
