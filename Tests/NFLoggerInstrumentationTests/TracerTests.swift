import Foundation
import NFLogger
import NFLoggerInstrumentation
import NFLoggerTesting
import Testing
import Tracing

struct TestError: Error, CustomStringConvertible {
    var description: String { "the database is gone" }
}

/// A `[String: String]` carrier, as an HTTP client's headers.
struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}

struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

@Suite("NFLoggerTracer: swift-distributed-tracing spans as NFLogger spans")
struct TracerTests {
    @Test("A root span begins a transaction; a child is an NFLogger span in it under the root; attributes, status and errors arrive as end parameters")
    func rootAndChild() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let tracer = NFLoggerTracer(logger: logger)
        let root = tracer.startSpan("GET /cart", context: .topLevel, ofKind: .server)
        root.attributes["http.route"] = "/cart"
        let child = tracer.startSpan("db.query", context: root.context, ofKind: .client)
        child.attributes["db.rows"] = 3
        child.attributes["db.ratio"] = 0.5
        child.attributes["db.cached"] = false
        child.attributes["db.nan"] = Double.nan
        child.addEvent(SpanEvent(name: "retry now", attributes: ["attempt": 2]))
        child.recordError(TestError(), attributes: ["retryable": true])
        child.setStatus(SpanStatus(code: .error, message: "gave up"))
        child.end()
        child.end()  // once only
        root.operationName = "cart.read"
        root.end()
        #expect(await logger.flush().error == nil)
        await logger.close()

        let rootEvent = try #require(transport.events(named: "GET__cart").first)
        #expect(rootEvent.kind == .span && rootEvent.type == "server" && rootEvent.transactionID == rootEvent.id)
        #expect(rootEvent.endParameters["http.route"] == "/cart" && rootEvent.endParameters["operation"] == "cart.read")
        #expect(rootEvent.endParameters["outcome"] == "completed")
        let childEvent = try #require(transport.events(named: "db.query").first)
        #expect(childEvent.type == "client")
        #expect(childEvent.transactionID == rootEvent.id)
        #expect(childEvent.parentSpanID == TransactionContext.spanID(of: rootEvent.id))
        #expect(childEvent.endParameters["db.rows"] == 3 && childEvent.endParameters["db.ratio"] == 0.5)
        #expect(childEvent.endParameters["db.cached"] == false && childEvent.endParameters["db.nan"] == "nan")
        #expect(childEvent.endParameters["error"] == "the database is gone")
        #expect(childEvent.endParameters["error_type"] == "NFLoggerInstrumentationTests.TestError")
        #expect(childEvent.endParameters["error.retryable"] == true && childEvent.endParameters["errors"] == 1)
        #expect(childEvent.endParameters["status"] == "error" && childEvent.endParameters["status_message"] == "gave up")
        let retry = try #require(transport.events(named: "retry_now").first)
        #expect(retry.kind == .point && retry.type == "trace" && retry.parameters["attempt"] == 2)
        #expect(retry.transactionID == rootEvent.id && retry.parentSpanID == TransactionContext.spanID(of: childEvent.id))
        #expect(transport.events.count == 3)
    }

    @Test("withSpan nests through the task-local context; an error status fails a root's transaction")
    func withSpanNesting() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let tracer = NFLoggerTracer(logger: logger)
        await #expect(throws: TestError.self) {
            try await tracer.withSpan("job.run", context: .topLevel) { span in
                try await tracer.withSpan("job.step") { _ in try await Task.sleep(nanoseconds: 1_000) }
                span.setStatus(SpanStatus(code: .error))
                throw TestError()
            }
        }
        #expect(await logger.flush().error == nil)
        await logger.close()
        let job = try #require(transport.events(named: "job.run").first)
        let step = try #require(transport.events(named: "job.step").first)
        #expect(step.transactionID == job.id && step.parentSpanID == TransactionContext.spanID(of: job.id))
        #expect(job.endParameters["outcome"] == "failed" && job.endParameters["reason"] == "the database is gone")
    }

    @Test("inject writes the span's traceparent; extract reads it back; a child of the extracted context joins the remote span")
    func injectExtract() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let tracer = NFLoggerTracer(logger: logger)
        let span = tracer.startSpan("client.call", context: .topLevel, ofKind: .client)
        var headers: [String: String] = [:]
        tracer.inject(span.context, into: &headers, using: DictionaryInjector())
        let sent = try #require(span.transaction)
        #expect(headers == ["traceparent": sent.traceparent])

        var received = ServiceContext.topLevel
        tracer.extract(headers, into: &received, using: DictionaryExtractor())
        #expect(received.nfloggerTransaction == sent)
        var nothing = ServiceContext.topLevel
        tracer.extract(["traceparent": "garbage"], into: &nothing, using: DictionaryExtractor())
        #expect(nothing.nfloggerTransaction == nil)
        var untouched: [String: String] = [:]
        tracer.inject(.topLevel, into: &untouched, using: DictionaryInjector())
        #expect(untouched.isEmpty, "outside a transaction nothing is injected")

        let remote = try #require(TransactionContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        var fromHeader = ServiceContext.topLevel
        tracer.extract(["traceparent": remote.traceparent], into: &fromHeader, using: DictionaryExtractor())
        let server = tracer.startSpan("handle", context: fromHeader, ofKind: .server)
        server.end()
        span.end()
        #expect(await logger.flush().error == nil)
        await logger.close()
        let handled = try #require(transport.events(named: "handle").first)
        #expect(handled.transactionID == remote.transactionID && handled.parentSpanID == 0x00f0_67aa_0ba9_02b7)
    }

    @Test("auto.tracing false: spans are valid, record nothing, and are counted")
    func policyOff() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport, policy: policy(turningOff: "tracing"))
        let tracer = NFLoggerTracer(logger: logger)
        let span = tracer.startSpan("quiet", context: .topLevel)
        span.attributes["a"] = 1
        span.addEvent("nothing")
        #expect(!span.isRecording && span.transaction == nil)
        tracer.withSpan("quiet.child") { _ in }
        span.end()
        #expect(await logger.flush().error == nil)
        await logger.close()
        #expect(transport.events.isEmpty)
        #expect(tracer.droppedSpans == 2)
    }
}
