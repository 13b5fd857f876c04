import CollectorTestSupport
import Foundation
import Hummingbird
import Logging
import NFLogCollector
import NFLogCollectorTesting
import NFLogger
import ServiceLifecycle
import Synchronization
import Testing

/// A backend on 127.0.0.1 with its own NFLogger: it continues the transaction of each request's
/// `traceparent` (or, without one, logs outside any transaction) and remembers what it received.
final class TransactionBackend: Sendable {
    let logger: NFLogger
    private let server: LoopbackServer
    var url: URL { server.url }
    private let received: Received
    var traceparents: [String?] { received.headers.withLock { $0 } }

    /// What the route saw, in order.
    private final class Received: Sendable {
        let headers = Mutex<[String?]>([])
    }

    private init(server: LoopbackServer, logger: NFLogger, received: Received) {
        (self.server, self.logger, self.received) = (server, logger, received)
    }

    static func start(logger: NFLogger, serverMilliseconds: Int) async throws -> TransactionBackend {
        let router = Router()
        let received = Received()
        router.post("api/order") { request, _ -> Response in
            let header = request.headers.first { $0.name.canonicalName == "traceparent" }?.value
            received.headers.withLock { $0.append(header) }
            let context = header.flatMap(TransactionContext.init(traceparent:))
            let span: SpanHandle = if let context { logger.startEvent(name: "server.order", type: "server", in: context) }
                                   else { logger.startEvent(name: "server.order", type: "server") }
            try await Task.sleep(for: .milliseconds(serverMilliseconds))
            _ = await span.end(parameters: ["status": 200])
            return Response(status: .ok)
        }
        return TransactionBackend(server: try await LoopbackServer.start(router, label: "transaction-backend"), logger: logger, received: received)
    }

    func stop() async {
        await server.stop()
    }
}

@Suite("Transactions joined across an app and its backend, through a real collector")
struct TransactionJoinTests {
    @Test("The same transaction id on both sides; the report's client / network / server split equals the one computed by hand; no header goes to another host", arguments: StoreKind.all)
    func joined(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let appScratch = TemporaryDirectory(), backendScratch = TemporaryDirectory()
        // Two app instances of one app (one key): the app, and its backend.
        var appConfiguration = configuration(appScratch, collector: collector.url)
        appConfiguration.propagation.hosts = ["127.0.0.1"]
        var backendConfiguration = configuration(backendScratch, collector: collector.url)
        backendConfiguration.appID = "com.example.e2e.backend"
        let app = try NFLogger(configuration: appConfiguration)
        let backendLogger = try NFLogger(configuration: backendConfiguration)
        let backend = try await TransactionBackend.start(logger: backendLogger, serverMilliseconds: 30)
        let http = DefaultHTTPTransport(timeout: hangLimitSeconds)
        let orderURL = backend.url.appendingPathComponent("api/order")

        var ids: [UUID] = []
        for index in 0..<4 {
            let (checkout, _) = await app.beginTransaction(name: "flow.checkout")
            ids.append(checkout.id)
            try await Task.sleep(for: .milliseconds(15 + 5 * index))  // the user in the app
            let (call, _) = await checkout.startEvent(name: "net.request", type: "network", parameters: ["path": "/api/order"])
            let response = try await http.send(TransportRequest(url: orderURL, method: "POST",
                                                                headers: call.propagationHeaders(for: orderURL), body: Data()))
            #expect(response.status == 200)
            await call.end(parameters: ["status": response.status])
            #expect(await checkout.end(outcome: .completed).isRecorded)
        }
        // To a host not listed as first-party (the same server by another name): no header.
        let (other, _) = await app.beginTransaction(name: "flow.checkout")
        let (thirdParty, _) = await other.startEvent(name: "net.request", type: "network")
        let foreignURL = URL(string: "http://localhost:\(backend.url.port ?? 0)/api/order")!
        #expect(thirdParty.propagationHeaders(for: foreignURL).isEmpty)
        _ = try await http.send(TransportRequest(url: foreignURL, method: "POST", headers: thirdParty.propagationHeaders(for: foreignURL), body: Data()))
        await thirdParty.end()
        await other.end(outcome: .completed)
        http.shutdown()

        #expect(backend.traceparents.prefix(4).allSatisfy { $0 != nil } && backend.traceparents.last == .some(nil))
        #expect(await deliverAll(app).error == nil)
        #expect(await deliverAll(backendLogger).error == nil)
        await backend.stop()
        await app.close()
        await backendLogger.close()

        // By hand, from what the collector stored.
        let events = try await collector.exportedEvents().map(\.event)
        var client: [Double] = [], network: [Double] = [], server: [Double] = []
        for id in ids {
            let root = try #require(events.first { $0.id == id })
            let call = try #require(events.first { $0.transactionID == id && $0.name == "net.request" })
            let serverSpan = try #require(events.first { $0.transactionID == id && $0.name == "server.order" })
            #expect(serverSpan.parentSpanID == TransactionContext.spanID(of: call.id), "the backend continued the app's request span")
            let (t, c, s) = (try #require(root.duration) * 1_000, try #require(call.duration) * 1_000, try #require(serverSpan.duration) * 1_000)
            client.append(max(0, t - c)); network.append(max(0, c - s)); server.append(s)
        }
        #expect(!events.contains { $0.name == "server.order" && $0.transactionID == other.id })

        let report = try await collector.report()
        let split = try #require(report.useCases["flow.checkout"]?.server)
        #expect(split.transactions == 4)
        for (summary, values) in [(split.client, client), (split.network, network), (split.server, server)] {
            let sorted = values.sorted()
            #expect(summary.count == 4)
            #expect(abs((summary.p50Milliseconds ?? -1) - (Percentiles.nearestRank(50, of: sorted) ?? 0)) < 0.01)
            #expect(abs((summary.p95Milliseconds ?? -1) - (Percentiles.nearestRank(95, of: sorted) ?? 0)) < 0.01)
        }
        #expect(server.allSatisfy { $0 >= 30 }, "the backend's 30 ms are server time")
        await collector.stop()
    }
}
