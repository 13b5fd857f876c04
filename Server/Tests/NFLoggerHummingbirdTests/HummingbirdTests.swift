import AsyncHTTPClient
import Foundation
import Hummingbird
import Instrumentation
import Logging
import NFLogger
import NFLoggerHummingbird
import NFLoggerInstrumentation
import NFLoggerTesting
import ServiceLifecycle
import Synchronization
import Testing
import Tracing

/// A Hummingbird app on 127.0.0.1 (a port the system picks), run until `body` returns.
func withServer<Result>(_ router: Router<BasicRequestContext>, _ body: (Int) async throws -> Result) async throws -> Result {
    var logger = Logger(label: "test-server")
    logger.logLevel = .warning
    let (ports, listening) = AsyncStream.makeStream(of: Int.self)
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                          onServerRunning: { listening.yield($0.localAddress?.port ?? 0); listening.finish() },
                          logger: logger)
    let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
    let task = Task { try await group.run() }
    defer { task.cancel() }
    var iterator = ports.makeAsyncIterator()
    let port = try #require(await iterator.next())
    do {
        let result = try await body(port)
        await group.triggerGracefulShutdown()
        _ = await task.result
        return result
    } catch {
        await group.triggerGracefulShutdown()
        _ = await task.result
        throw error
    }
}

/// Sends `request`, bounding only a hang (300 s), not giving the answer a margin: the answer is
/// the outcome awaited, and the suite shares two cores with the rest of the server's tests (a
/// 10 s timeout ran out in a clean-clone CI run beside two busy loops).
func execute(_ request: HTTPClientRequest, on client: HTTPClient) async throws -> HTTPClientResponse {
    try await client.execute(request, timeout: .seconds(300))
}

/// A GET with AsyncHTTPClient, carrying `traceparent` if given; the response's status and body.
///
/// The client's own tracing is off: AsyncHTTPClient traces every request with the tracer
/// `InstrumentationSystem` holds when the client is configured (ours, once
/// `TracingMiddlewareTests` bootstrapped it) and injects its client span's `traceparent`, which
/// would stand beside the header the test sets.
func get(_ url: String, traceparent: String?) async throws -> (Int, String) {
    var configuration = HTTPClient.Configuration()
    configuration.tracing.tracer = nil
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        var request = HTTPClientRequest(url: url)
        if let traceparent { request.headers.add(name: "traceparent", value: traceparent) }
        let response = try await execute(request, on: client)
        let body = try await response.body.collect(upTo: 1 << 20)
        try await client.shutdown()
        return (Int(response.status.code), String(buffer: body))
    } catch {
        try? await client.shutdown()
        throw error
    }
}

let callerTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

@Suite("NFLoggerMiddleware: requests as server spans in the caller's transaction")
struct MiddlewareTests {
    @Test("With the policy's auto.tracing off, no span is recorded, and handlers still get the caller's transaction")
    func tracingOff() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport, policy: policy(turningOff: "tracing"))
        let router = Router()
        router.add(middleware: NFLoggerMiddleware(logger: logger))
        router.get("cart") { _, _ -> String in
            if let transaction = NFLoggerServer.current { logger.logEvent(name: "cart.read", in: transaction) }
            return "ok"
        }
        let (status, _) = try await withServer(router) { port in
            try await get("http://127.0.0.1:\(port)/cart", traceparent: callerTraceparent)
        }
        #expect(status == 200)
        await flush(logger) { !transport.events(named: "cart.read").isEmpty }
        await logger.close()
        let caller = try #require(TransactionContext(traceparent: callerTraceparent))
        #expect(transport.events(named: "server.request").isEmpty)
        let read = try #require(transport.events(named: "cart.read").first)
        #expect(read.transactionID == caller.transactionID && read.parentSpanID == caller.parentSpanID)
    }

    @Test("A request with a traceparent: a server.request span in that transaction under the caller's span; handlers log into it")
    func serverSpan() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let sink = NFLogSink(logger: logger)
        let router = Router()
        router.add(middleware: NFLoggerMiddleware(logger: logger))
        router.get("cart") { _, _ -> String in
            if let transaction = NFLoggerServer.current { logger.logEvent(name: "cart.read", in: transaction) }
            Logger(label: "handler") { sink.makeHandler(label: $0) }.info("reading the cart")
            return "ok"
        }
        router.get("boom") { _, _ -> String in throw HTTPError(.badGateway) }
        let (status, body) = try await withServer(router) { port in
            let answer = try await get("http://127.0.0.1:\(port)/cart?id=1", traceparent: callerTraceparent)
            _ = try await get("http://127.0.0.1:\(port)/boom", traceparent: nil)
            return answer
        }
        #expect(status == 200 && body == "ok")
        await flush(logger) { transport.events(named: "server.request").count == 2 }
        await logger.close()

        let caller = try #require(TransactionContext(traceparent: callerTraceparent))
        let spans = transport.events(named: "server.request")
        let cart = try #require(spans.first { $0.parameters["path"] == "/cart" })
        #expect(cart.type == "server" && cart.parameters["method"] == "GET" && cart.endParameters["status"] == 200)
        #expect(cart.transactionID == caller.transactionID && cart.parentSpanID == caller.parentSpanID)
        let read = try #require(transport.events(named: "cart.read").first)
        #expect(read.transactionID == caller.transactionID && read.parentSpanID == TransactionContext.spanID(of: cart.id))
        let logged = try #require(transport.events(named: "log.handler").first)
        #expect(logged.transactionID == caller.transactionID && logged.parentSpanID == TransactionContext.spanID(of: cart.id))
        // Without a header: a transaction of its own, failed by the 502.
        let boom = try #require(spans.first { $0.parameters["path"] == "/boom" })
        #expect(boom.transactionID == boom.id && boom.endParameters["status"] == 502 && boom.endParameters["outcome"] == "failed")
    }
}

/// The tracer installed process-wide, as an app would: `InstrumentationSystem.bootstrap` may run
/// once per process, so this suite owns it and its logger, and is the only one that relies on
/// the global tracer (the other tests use tracers they construct).
enum GlobalTracer {
    static let installed: (transport: RecordingTransport, logger: NFLogger)? = {
        let transport = RecordingTransport()
        guard let logger = try? makeLogger(transport) else { return nil }
        InstrumentationSystem.bootstrap(NFLoggerTracer(logger: logger))
        return (transport, logger)
    }()
}

@Suite("Hummingbird's TracingMiddleware with NFLoggerTracer bootstrapped", .serialized)
struct TracingMiddlewareTests {
    @Test("A route traced by TracingMiddleware is an NFLogger server span in the transaction of the request's traceparent, with no logging call in the handler")
    func tracingMiddleware() async throws {
        let (transport, logger) = try #require(GlobalTracer.installed)
        let router = Router()
        router.add(middleware: TracingMiddleware())
        router.get("items/:id") { _, _ -> String in "item" }
        let (status, _) = try await withServer(router) { port in
            try await get("http://127.0.0.1:\(port)/items/7?x=1", traceparent: callerTraceparent)
        }
        #expect(status == 200)
        let caller = try #require(TransactionContext(traceparent: callerTraceparent))
        await flush(logger) { transport.events.contains { $0.type == "server" } }
        let span = try #require(transport.events.first { $0.type == "server" })
        #expect(span.kind == .span && span.name == "HTTP_GET_route_not_found", "the name TracingMiddleware starts with")
        #expect(span.endParameters["operation"] == "/items/{id}" && span.endParameters["http.route"] == "/items/{id}")
        #expect(span.endParameters["http.response.status_code"] == 200 && span.endParameters["url.path"] == "/items/7")
        #expect(span.transactionID == caller.transactionID && span.parentSpanID == caller.parentSpanID)
    }

    @Test("An async-http-client request inside a traced span is a client span, and its traceparent makes the backend's route a server span under it: one transaction, no logging call anywhere")
    func clientAndServer() async throws {
        let (transport, logger) = try #require(GlobalTracer.installed)
        let router = Router()
        router.add(middleware: TracingMiddleware())
        router.post("orders") { _, _ -> String in "ok" }
        let status = try await withServer(router) { port in
            // A client as an app configures it: its tracing uses the bootstrapped tracer.
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration())
            defer { _ = client.shutdown() }
            return try await withSpan("checkout") { _ in
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/orders")
                request.method = .POST
                return Int(try await execute(request, on: client).status.code)
            }
        }
        #expect(status == 200)
        await flush(logger) { transport.events.contains { $0.type == "server" && $0.endParameters["url.path"] == "/orders" } }
        let events = transport.events
        let root = try #require(events.first { $0.name == "checkout" })
        let server = try #require(events.first { $0.type == "server" && $0.endParameters["url.path"] == "/orders" })
        let client = try #require(events.first { $0.type == "client" && $0.transactionID == root.id })
        #expect(root.transactionID == root.id, "a root span begins the transaction")
        #expect(server.transactionID == root.id, "the backend continued the app's trace")
        #expect(server.parentSpanID == TransactionContext.spanID(of: client.id), "under the client's span")
        #expect(client.parentSpanID == TransactionContext.spanID(of: root.id))
    }

    @Test("With the tracer bootstrapped, the SDK's own uploads are not traced: no client span per upload (which would itself be uploaded, without end), no traceparent sent to the collector")
    func uploadsUntraced() async throws {
        let (tracerTransport, tracerLogger) = try #require(GlobalTracer.installed)
        let headers = RecordedHeaders()
        let router = Router()
        router.post("v1/events") { request, _ -> Response in
            headers.append(request.headers.first { $0.name.canonicalName == "traceparent" }?.value)
            return Response(status: .ok)
        }
        try await withServer(router) { port in
            // An app's logger with the SDK's own transport (async-http-client on Linux).
            var configuration = Configuration(databaseURL: FileManager.default.temporaryDirectory
                .appendingPathComponent("nflogger-untraced-\(UUID().uuidString)/events.sqlite"), appID: "com.example.untraced", appVersion: "1")
            configuration.uploadURL = URL(string: "http://127.0.0.1:\(port)/v1/events")
            configuration.appKey = "dev-key"
            let logger = try NFLogger(configuration: configuration)
            _ = await logger.logEvent(name: "ui.tap")
            #expect(await logger.flush().error == nil)
            await logger.close()
        }
        _ = await tracerLogger.flush()
        #expect(!headers.values.isEmpty && headers.values.allSatisfy { $0 == nil }, "\(headers.values)")
        #expect(!tracerTransport.events.contains { $0.type == "client" && "\($0.endParameters)".contains("/v1/events") })
    }
}

/// The `traceparent` of each request a test server received.
final class RecordedHeaders: Sendable {
    private let state = Mutex<[String?]>([])
    func append(_ value: String?) { state.withLock { $0.append(value) } }
    var values: [String?] { state.withLock { $0 } }
}
