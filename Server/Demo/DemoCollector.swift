import Foundation
import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
import NFLogger

/// The collector the demo talks to: one it runs itself on 127.0.0.1 (with a policy from
/// Policies/), or a running `nflog-collector` given by URL.
final class DemoCollector: Sendable {
    let url: URL
    let appKey: String
    /// What the demo's report and audit read with: a read token (an app key cannot read), and the
    /// app to read when the token covers several.
    let readToken: String
    let readApp: String?
    /// How the demo itself asks the collector for its report and audit (pinned with --pin-cert).
    let transport: any HTTPTransport
    private let embedded: (server: CollectorServer, store: SQLiteEventStore, task: Task<Void, any Error>, directory: URL)?

    private init(url: URL, appKey: String, readToken: String, readApp: String?, transport: any HTTPTransport,
                 embedded: (CollectorServer, SQLiteEventStore, Task<Void, any Error>, URL)?) {
        self.url = url
        self.appKey = appKey
        self.readToken = readToken
        self.readApp = readApp
        self.transport = transport
        self.embedded = embedded
    }

    static func remote(_ url: URL, appKey: String, readToken: String, readApp: String?, transport: any HTTPTransport) -> DemoCollector {
        DemoCollector(url: url, appKey: appKey, readToken: readToken, readApp: readApp, transport: transport, embedded: nil)
    }

    /// Starts a collector in this process, serving `policy` to every app, with a read token of
    /// its own for app `dev` (made afresh, as `keygen --read-token dev` would).
    static func embedded(policy: Data) async throws -> DemoCollector {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-demo-collector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try policy.write(to: directory.appendingPathComponent("default.json"))
        var configuration = CollectorConfiguration()
        configuration.port = 0
        configuration.policiesDirectory = directory
        let readToken = ReadTokens.generateToken()
        configuration.readTokens = ReadTokens([readToken: .apps(["dev"])])
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
        return DemoCollector(url: url, appKey: WireProtocol.developmentKey, readToken: readToken, readApp: nil, transport: DefaultHTTPTransport(),
                             embedded: (server, store, task, directory))
    }

    var isEmbedded: Bool { embedded != nil }

    /// Where the collector's dashboard is, and for the embedded collector the read token that
    /// opens it (made for this run: it is in no file).
    func dashboardLine(keptRunning: Bool) -> String {
        let page = url.appendingPathComponent("dashboard").absoluteString
        guard isEmbedded else { return "Dashboard: \(page) (open it with a read token of this collector)" }
        return "Dashboard: \(page) · read token \(readToken)\(keptRunning ? "" : " (the collector stopped with the run; --keep-running keeps it up)")"
    }

    /// An endpoint this collector does not have (404, 405, 501): the report and the lookup audit
    /// are the demo's extras, not part of the upload protocol every collector speaks.
    struct Unsupported: Error, CustomStringConvertible {
        let path: String
        let status: Int
        var description: String { "the collector has no \(path) (HTTP \(status))" }
    }

    /// Tries this often in all before giving up on a transient failure.
    static let attempts = 8

    /// One request, retried like the SDK retries uploads: connection failures, timeouts, 408,
    /// 429 and 5xx again after an exponential backoff with jitter (0.25 s doubling, at most 4 s),
    /// never before the collector's `Retry-After`. Lookups and reports change nothing, so a
    /// retry is always safe.
    private func request(_ path: String, method: String = "GET", body: Data = Data(),
                         query: [URLQueryItem] = []) async throws -> TransportResponse {
        var attempt = 0
        while true {
            attempt += 1
            let ceiling = min(4.0, 0.25 * Double(1 << min(attempt - 1, 8)))
            var wait = Double.random(in: ceiling / 2...ceiling)
            let failure: String
            do {
                let response = try await transport.send(TransportRequest(
                    url: readURL(path, query: query), method: method,
                    headers: ["Authorization": "Bearer \(readToken)", "Content-Type": "application/json"], body: body))
                let said = "the collector answered \(response.status) to \(path): \(String(decoding: response.body.prefix(300), as: UTF8.self))"
                switch response.status {
                case 200: return response
                case 404, 405, 501: throw Unsupported(path: "/" + path, status: response.status)
                case 408, 429, 500...599:
                    failure = said
                    let retryAfter = response.headers.first { $0.key.lowercased() == "retry-after" }.flatMap { Double($0.value) }
                    wait = max(wait, min(retryAfter ?? 0, 60))
                default: throw DemoError(said)
                }
            } catch let error as Unsupported {
                throw error
            } catch let error as DemoError {
                throw error
            } catch {
                failure = "\(path): \(error)"
            }
            guard attempt < Self.attempts else { throw DemoError("\(failure) (after \(attempt) attempts)") }
            try await Task.sleep(for: .milliseconds(Int(wait * 1_000)))
        }
    }

    /// `path` on the collector, with `?app=` when the demo was told which app to read.
    private func readURL(_ path: String, query: [URLQueryItem] = []) -> URL {
        let base = url.appendingPathComponent(path)
        let items = (readApp.map { [URLQueryItem(name: "app", value: $0)] } ?? []) + query
        guard !items.isEmpty, var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else { return base }
        components.queryItems = items
        return components.url ?? base
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

    /// How many events the collector's stored aggregates among `ids` hold, and how many of
    /// `ids` it has: read from its aggregate export, page by page.
    func aggregatedEvents(in ids: Set<UUID>) async throws -> (events: Int, aggregates: Int) {
        var events = 0, found = 0
        var after = "0"
        while true {
            let response = try await request("v1/export", query: [
                URLQueryItem(name: "kind", value: "aggregates"), URLQueryItem(name: "limit", value: "10000"),
                URLQueryItem(name: "after", value: after)])
            for line in response.body.split(separator: UInt8(ascii: "\n")) {
                guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                      let uuid = (object["uuid"] as? String).flatMap(UUID.init(uuidString:)), ids.contains(uuid) else { continue }
                found += 1
                events += object["count"] as? Int ?? 0
            }
            guard let next = response.headers.first(where: { $0.key.lowercased() == "x-nflog-next-after" })?.value else { break }
            after = next
        }
        return (events, found)
    }

    func stop() async {
        guard let embedded else { return }
        await embedded.server.shutdown()
        _ = await embedded.task.result
        await embedded.store.close()
        try? FileManager.default.removeItem(at: embedded.directory)
    }
}
