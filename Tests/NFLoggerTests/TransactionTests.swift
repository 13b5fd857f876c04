import Foundation
import NFLoggerTesting
import Testing
@_spi(NFLogShared) @testable import NFLogger
@_spi(NFLogShared) import NFLogSupport

@Suite("Transactions: use cases whose id travels to the app's backend")
struct TransactionTests {
    func logger(_ transport: RecordingTransport, hosts: [String] = []) throws -> NFLogger {
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.propagation.hosts = hosts
        return try NFLogger(configuration: configuration)
    }

    @Test("A transaction is a usecase span with its own id as transaction; its events carry it; it ends once, with its outcome")
    func lifecycle() async throws {
        let transport = RecordingTransport()
        let logger = try logger(transport)
        let (signup, started) = await logger.beginTransaction(name: "form.signup")
        #expect(started == .recorded(signup.id))
        #expect(await signup.logEvent(name: "form.field", parameters: ["field": "email"]).isRecorded)
        let (step, _) = await signup.startEvent(name: "form.step")
        #expect(await step.end().isRecorded)
        #expect(await signup.end(outcome: .cancelled(reason: "closed the form")).isRecorded)
        #expect(await signup.end(outcome: .completed) == .failed(.spanAlreadyEnded(signup.id)))
        #expect(await signup.logEvent(name: "form.late") == .failed(.transactionEnded(signup.id)))
        #expect(await logger.flush().error == nil)
        await logger.close()

        let events = transport.events
        let root = try #require(events.first { $0.id == signup.id })
        #expect(root.type == "usecase" && root.kind == .span && root.transactionID == signup.id)
        #expect(root.endParameters == ["outcome": "cancelled", "completed": false, "reason": "closed the form"])
        let span = TransactionContext.spanID(of: signup.id)
        let field = try #require(events.first { $0.name == "form.field" })
        #expect(field.transactionID == signup.id && field.parentSpanID == span)
        let stepEvent = try #require(events.first { $0.name == "form.step" })
        #expect(stepEvent.transactionID == signup.id && stepEvent.parentSpanID == span)
        #expect(!events.contains { $0.name == "form.late" })
        #expect(events.count == 3)
    }

    @Test("A transaction refused at its start refuses what is logged against it with the same answer, and stores nothing")
    func refusedAtStart() async throws {
        let transport = RecordingTransport()
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.policyOptions.fallback = try Policy.parse(Data(#"{"version":1,"mode":"active","rules":{"deny":["form.secret"]}}"#.utf8))
        let logger = try NFLogger(configuration: configuration)
        let (secret, started) = await logger.beginTransaction(name: "form.secret")
        #expect(started == .filtered(.denied))
        #expect(await secret.logEvent(name: "form.field") == .filtered(.denied))
        let (step, stepStarted) = await secret.startEvent(name: "form.step")
        #expect(stepStarted == .filtered(.denied))
        #expect(await step.end() == .filtered(.denied))
        #expect(await secret.end(outcome: .completed) == .filtered(.denied))
        // Disabled by the app: a request span under the transaction ends .disabled too, as a
        // span outside it would (not "no recorded span").
        logger.mode = .disabled
        let (checkout, checkoutStarted) = await logger.beginTransaction(name: "flow.checkout")
        let (request, requestStarted) = await checkout.startEvent(name: "net.request")
        #expect(checkoutStarted == .disabled && requestStarted == .disabled)
        #expect(await request.end() == .disabled)
        #expect(await checkout.end(outcome: .completed) == .disabled)
        logger.mode = .active
        let (broken, failed) = await logger.beginTransaction(name: "bad name")
        #expect(failed.failure != nil)
        #expect(await broken.logEvent(name: "form.field") == .failed(.unknownSpan(broken.id)))
        #expect(await logger.flush().error == nil)
        await logger.close()
        #expect(transport.events.isEmpty)
    }

    @Test("traceparent goes only to first-party hosts: exact names, or *.domain for its subdomains")
    func propagation() async throws {
        let transport = RecordingTransport()
        let logger = try logger(transport, hosts: ["api.example.com", "*.shop.example"])
        let checkout: TransactionHandle = logger.beginTransaction(name: "flow.checkout")
        let hex = checkout.id.uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let own = String(format: "%016llx", TransactionContext.spanID(of: checkout.id))
        #expect(checkout.propagationHeaders(for: URL(string: "https://api.example.com/cart")!) == ["traceparent": "00-\(hex)-\(own)-01"])
        #expect(checkout.propagationHeaders(for: URL(string: "https://EU.Shop.Example/pay")!) == ["traceparent": "00-\(hex)-\(own)-01"])
        #expect(checkout.propagationHeaders(for: URL(string: "https://shop.example/pay")!).isEmpty, "*.domain is not the domain itself")
        #expect(checkout.propagationHeaders(for: URL(string: "https://cdn.other.com/x.js")!).isEmpty)
        #expect(checkout.propagationHeaders(for: URL(string: "https://api.example.com.evil.net/")!).isEmpty)
        // A request span in the transaction names itself as the parent.
        let request: SpanHandle = checkout.startEvent(name: "net.request")
        let mine = String(format: "%016llx", TransactionContext.spanID(of: request.id))
        #expect(request.propagationHeaders(for: URL(string: "https://api.example.com/pay")!) == ["traceparent": "00-\(hex)-\(mine)-01"])
        // Outside a transaction, no header at all.
        let other: SpanHandle = logger.startEvent(name: "net.other")
        #expect(other.propagationHeaders(for: URL(string: "https://api.example.com/")!).isEmpty)
        // Nothing is first-party by default.
        let defaults = try self.logger(RecordingTransport())
        let plain: TransactionHandle = defaults.beginTransaction(name: "flow.x")
        #expect(plain.propagationHeaders(for: URL(string: "https://api.example.com/")!).isEmpty)
        await logger.close()
        await defaults.close()
    }

    @Test("A backend reads the traceparent and logs into the same transaction, under the app's span")
    func backend() async throws {
        let transaction = UUID()
        let parent: UInt64 = 0x0102_0304_0506_0708
        let header = TransactionContext(transactionID: transaction, parentSpanID: parent).traceparent
        let context = try #require(TransactionContext(traceparent: header))
        #expect(context.transactionID == transaction && context.parentSpanID == parent)
        let transport = RecordingTransport()
        let backend = try logger(transport)
        let (span, _) = await backend.startEvent(name: "server.request", parameters: ["route": "/pay"], in: context)
        let spanContext = try #require(span.context)
        #expect(await backend.logEvent(name: "order.saved", in: spanContext).isRecorded)
        #expect(await span.end().isRecorded)
        #expect(await backend.flush().error == nil)
        await backend.close()
        let server = try #require(transport.events.first { $0.name == "server.request" })
        #expect(server.transactionID == transaction && server.parentSpanID == parent)
        let saved = try #require(transport.events.first { $0.name == "order.saved" })
        #expect(saved.transactionID == transaction && saved.parentSpanID == TransactionContext.spanID(of: span.id))
    }

    @Test("traceparent parsing follows W3C: lowercase hex, no all-zero ids, version 00 has exactly four fields",
          arguments: [
              ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true),
              ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true),
              ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false),
              ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false),
              ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false),
              ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false),
              ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
              ("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false),
              ("", false), ("garbage", false),
          ])
    func parsing(header: String, valid: Bool) {
        #expect((TransactionContext(traceparent: header) != nil) == valid)
    }

    @Test("A policy's auto object switches each automatic source; absent, all are on; a wrong type is refused")
    func automaticSources() throws {
        let off = try Policy.parse(Data(#"{"version":1,"mode":"active","auto":{"log":false,"metrics":false}}"#.utf8))
        #expect(!off.automatic.log && off.automatic.tracing && !off.automatic.metrics)
        let plain = try Policy.parse(Data(#"{"version":1,"mode":"active"}"#.utf8))
        #expect(plain.automatic == AutomaticSources())
        #expect(throws: PolicyError.self) { try Policy.parse(Data(#"{"version":1,"mode":"active","auto":{"log":1}}"#.utf8)) }
        #expect(throws: PolicyError.self) { try Policy.parse(Data(#"{"version":1,"mode":"active","auto":{"traces":false}}"#.utf8)) }
    }
}
