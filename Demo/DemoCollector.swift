import Foundation
import NFLogCollector
import NFLogSupport
import NFLogger

/// The collector the demo talks to: one it runs itself on 127.0.0.1 (with a policy from
/// Policies/), or a running `nflog-collector` given by URL.
final class DemoCollector: Sendable {
    let url: URL
    let appKey: String
    /// How the demo itself asks the collector for its report and audit (pinned with --pin-cert).
    let transport: any HTTPTransport
    private let embedded: (server: CollectorServer, store: SQLiteEventStore, task: Task<Void, any Error>, directory: URL)?

    private init(url: URL, appKey: String, transport: any HTTPTransport,
                 embedded: (CollectorServer, SQLiteEventStore, Task<Void, any Error>, URL)?) {
        self.url = url
        self.appKey = appKey
        self.transport = transport
        self.embedded = embedded
    }

    static func remote(_ url: URL, appKey: String, transport: any HTTPTransport) -> DemoCollector {
        DemoCollector(url: url, appKey: appKey, transport: transport, embedded: nil)
    }

    /// Starts a collector in this process, serving `policy` to every app.
    static func embedded(policy: Data) async throws -> DemoCollector {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-demo-collector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try policy.write(to: directory.appendingPathComponent("default.json"))
        var configuration = CollectorConfiguration()
        configuration.port = 0
        configuration.policiesDirectory = directory
        let store = try SQLiteEventStore(path: directory.appendingPathComponent("collector.sqlite").path)
        let server = try CollectorServer(configuration: configuration, store: store)
        let (urls, continuation) = AsyncStream<URL>.makeStream()
        let task = Task {
            defer { continuation.finish() }
            try await server.run { continuation.yield($0) }
        }
        var iterator = urls.makeAsyncIterator()
        guard let url = await iterator.next() else {
            try await task.value
            throw DemoError("the embedded collector stopped before listening")
        }
        return DemoCollector(url: url, appKey: WireProtocol.developmentKey, transport: DefaultHTTPTransport(),
                             embedded: (server, store, task, directory))
    }

    var isEmbedded: Bool { embedded != nil }

    private func request(_ path: String, method: String = "GET", body: Data = Data()) async throws -> HTTPResponse {
        let response = try await transport.send(HTTPRequest(
            url: url.appendingPathComponent(path), method: method,
            headers: [WireProtocol.appKeyHeader: appKey, "Content-Type": "application/json"], body: body))
        guard response.status == 200 else {
            throw DemoError("the collector answered \(response.status) to \(path): \(String(decoding: response.body.prefix(300), as: UTF8.self))")
        }
        return response
    }

    /// The collector's analysis of this app's events.
    func report() async throws -> AnalyticsReport {
        try JSONDecoder().decode(AnalyticsReport.self, from: try await request("v1/report").body)
    }

    /// How many of `ids` the collector has stored (each at most once: uuids are unique per app).
    func countStored(_ ids: [UUID]) async throws -> (found: Int, missing: [String]) {
        var found = 0
        var missing: [String] = []
        for start in stride(from: 0, to: ids.count, by: 10_000) {
            let chunk = ids[start..<min(start + 10_000, ids.count)].map { $0.uuidString.lowercased() }
            let body = try JSONSerialization.data(withJSONObject: ["uuids": chunk])
            let answer = try JSONSerialization.jsonObject(with: try await request("v1/events/lookup", method: "POST", body: body).body) as? [String: Any]
            found += answer?["found"] as? Int ?? 0
            missing += answer?["missing"] as? [String] ?? []
        }
        return (found, missing)
    }

    func stop() async {
        guard let embedded else { return }
        await embedded.server.shutdown()
        _ = await embedded.task.result
        await embedded.store.close()
        try? FileManager.default.removeItem(at: embedded.directory)
    }
}
