import Foundation
import NFLoggerTesting
import Testing
@testable import NFLogger

@Suite("ScriptBridge: web content logs through the native SDK")
struct ScriptBridgeTests {
    static let page = "https://help.example.com"

    func bridge(_ transport: RecordingTransport, origins: [String] = [page], rate: Double = 50, burst: Double = 200,
                policy: String? = nil) throws -> (NFLogger, ScriptBridge) {
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.webBridge.allowedOrigins = origins
        configuration.webBridge.messagesPerSecond = rate
        configuration.webBridge.burst = burst
        if let policy { configuration.policyOptions.fallback = try Policy.parse(Data(policy.utf8)) }
        let logger = try NFLogger(configuration: configuration)
        return (logger, ScriptBridge(logger: logger))
    }

    func send(_ bridge: ScriptBridge, _ message: String, origin: String = page) async throws -> [String: Any] {
        let reply = await bridge.handle(message: Data(message.utf8), origin: origin)
        return try #require(try JSONSerialization.jsonObject(with: reply) as? [String: Any])
    }

    @Test("A page's calls are the native calls: recorded with source web and its origin, in the app's session; spans and transactions end from the page")
    func calls() async throws {
        let transport = RecordingTransport()
        let (logger, bridge) = try bridge(transport)
        let tap = try await send(bridge, #"{"v":1,"id":1,"call":"logEvent","name":"help.tap","parameters":{"topic":"refunds","n":2}}"#)
        #expect(tap["id"] as? Int == 1 && tap["status"] as? String == "recorded")
        let span = try await send(bridge, #"{"v":1,"id":2,"call":"startEvent","name":"help.read"}"#)
        let spanID = try #require(span["event"] as? String)
        let ended = try await send(bridge, #"{"v":1,"id":3,"call":"endEvent","span":"\#(spanID)","parameters":{"seconds":4}}"#)
        #expect(ended["status"] as? String == "recorded")
        let txn = try await send(bridge, #"{"v":1,"id":4,"call":"beginTransaction","name":"form.contact"}"#)
        let txnID = try #require(txn["event"] as? String)
        #expect(try await send(bridge, #"{"v":1,"id":5,"call":"logEvent","name":"form.field","transaction":"\#(txnID)"}"#)["status"] as? String == "recorded")
        let done = try await send(bridge, #"{"v":1,"id":6,"call":"endTransaction","transaction":"\#(txnID)","outcome":"cancelled","reason":"closed"}"#)
        #expect(done["status"] as? String == "recorded")
        // The native side logs too, in the same session.
        _ = await logger.logEvent(name: "app.native")
        let flushed = try await send(bridge, #"{"v":1,"id":7,"call":"flush"}"#)
        #expect(flushed["status"] as? String == "flushed" && flushed["remaining"] as? Int == 0)
        await logger.close()

        let events = transport.events
        let web = events.filter { $0.webOrigin != nil }
        #expect(web.count == 4 && web.allSatisfy { $0.webOrigin == Self.page })
        #expect(Set(events.map(\.sessionID)).count == 1, "one session across native and web")
        let field = try #require(events.first { $0.name == "form.field" })
        #expect(field.transactionID?.uuidString.lowercased() == txnID.lowercased())
        let contact = try #require(events.first { $0.name == "form.contact" })
        #expect(contact.endParameters["outcome"] == "cancelled" && contact.type == "usecase")
        #expect(events.first { $0.name == "help.read" }?.endParameters["seconds"] == 4)
        #expect(events.first { $0.name == "app.native" }?.webOrigin == nil)
    }

    /// Every hostile or broken message the bridge was tried with, and the reply code it must get.
    static let hostile: [(String, String, String)] = [
        ("not JSON", "{not json", "malformed"),
        ("an array", "[1,2]", "malformed"),
        ("a string", #""logEvent""#, "malformed"),
        ("version 2", #"{"v":2,"id":1,"call":"flush"}"#, "invalidMessage"),
        ("no id", #"{"v":1,"call":"flush"}"#, "invalidMessage"),
        ("a fractional id", #"{"v":1,"id":1.5,"call":"flush"}"#, "invalidMessage"),
        ("a negative id", #"{"v":1,"id":-1,"call":"flush"}"#, "invalidMessage"),
        ("a boolean id", #"{"v":1,"id":true,"call":"flush"}"#, "invalidMessage"),
        ("an unknown call", #"{"v":1,"id":1,"call":"deleteAll"}"#, "unknownCall"),
        ("an unknown field", #"{"v":1,"id":1,"call":"logEvent","name":"a.b","origin":"https://evil.example"}"#, "invalidMessage"),
        ("no name", #"{"v":1,"id":1,"call":"logEvent"}"#, "invalidMessage"),
        ("a bad name", #"{"v":1,"id":1,"call":"logEvent","name":"bad name"}"#, "invalidName"),
        ("a number as name", #"{"v":1,"id":1,"call":"logEvent","name":7}"#, "invalidMessage"),
        ("parameters not an object", #"{"v":1,"id":1,"call":"logEvent","name":"a.b","parameters":[1]}"#, "invalidMessage"),
        ("nesting past the limit", #"{"v":1,"id":1,"call":"logEvent","name":"a.b","parameters":{"x":\#(String(repeating: "[", count: 40))1\#(String(repeating: "]", count: 40))}}"#, "invalidParameter"),
        ("parameters too large", #"{"v":1,"id":1,"call":"logEvent","name":"a.b","parameters":{"x":"\#(String(repeating: "y", count: 40_000))"}}"#, "parametersTooLarge"),
        ("over 64 KiB", #"{"v":1,"id":1,"call":"logEvent","name":"a.b","parameters":{"x":"\#(String(repeating: "y", count: 70_000))"}}"#, "malformed"),
        ("ending a span it never started", #"{"v":1,"id":1,"call":"endEvent","span":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f"}"#, "unknownSpan"),
        ("a span id that is not a uuid", #"{"v":1,"id":1,"call":"endEvent","span":"x"}"#, "invalidMessage"),
        ("logging into a transaction it did not begin", #"{"v":1,"id":1,"call":"logEvent","name":"a.b","transaction":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f"}"#, "unknownSpan"),
        ("failed without a reason", #"{"v":1,"id":1,"call":"endTransaction","transaction":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","outcome":"failed"}"#, "invalidMessage"),
        ("an unknown outcome", #"{"v":1,"id":1,"call":"endTransaction","transaction":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","outcome":"maybe"}"#, "invalidMessage"),
        ("a NaN smuggled as a string stays a string", #"{"v":1,"id":1,"call":"logEvent","name":"a.b","parameters":{"x":"NaN"}}"#, "recorded"),
    ]

    @Test("Hostile and broken messages get an error reply naming the problem and store nothing", arguments: hostile.indices)
    func hostileMessages(index: Int) async throws {
        let (what, message, expected) = Self.hostile[index]
        let transport = RecordingTransport()
        let (logger, bridge) = try bridge(transport)
        let reply = try await send(bridge, message)
        let code = (reply["error"] as? [String: Any])?["code"] as? String ?? reply["status"] as? String
        #expect(code == expected, "\(what): \(reply)")
        if expected != "recorded" {
            #expect(await logger.diagnostics().recorded == 0, "\(what) recorded something")
            _ = await logger.flush()
            #expect(transport.events.isEmpty, "\(what) uploaded something")
        }
        await logger.close()
    }

    @Test("Origins: only those listed, compared as scheme://host[:port] (default ports dropped, case ignored); none by default")
    func origins() async throws {
        let transport = RecordingTransport()
        let (logger, bridge) = try bridge(transport, origins: ["https://Help.Example.com:443", "http://127.0.0.1:8080"])
        let message = #"{"v":1,"id":9,"call":"logEvent","name":"a.b"}"#
        #expect(try await send(bridge, message, origin: "https://help.example.com")["status"] as? String == "recorded")
        #expect(try await send(bridge, message, origin: "http://127.0.0.1:8080")["status"] as? String == "recorded")
        for origin in ["https://evil.example.com", "http://help.example.com", "https://help.example.com.evil.net",
                       "http://127.0.0.1:8081", "null", "", "file:///etc/passwd", "javascript:alert(1)"] {
            let reply = try await send(bridge, message, origin: origin)
            #expect((reply["error"] as? [String: Any])?["code"] as? String == "originNotAllowed", "\(origin): \(reply)")
            #expect(reply["id"] as? Int == 9)
        }
        #expect(await logger.diagnostics().recorded == 2)
        await logger.close()
        let (closed, defaultBridge) = try self.bridge(RecordingTransport(), origins: [])
        let refused = try await send(defaultBridge, message, origin: Self.page)
        #expect((refused["error"] as? [String: Any])?["code"] as? String == "originNotAllowed")
        await closed.close()
    }

    @Test("A page past its rate gets rateLimited, counted in the diagnostics; the policy applies to the page as to native calls")
    func rateAndPolicy() async throws {
        let transport = RecordingTransport()
        let (logger, bridge) = try bridge(transport, rate: 0.001, burst: 5, policy: #"{"version":1,"mode":"active","rules":{"deny":["help.secret"]}}"#)
        var codes: [String] = []
        for index in 0..<8 {
            let name = index == 0 ? "help.secret" : "help.tap"
            let reply = try await send(bridge, #"{"v":1,"id":\#(index),"call":"logEvent","name":"\#(name)"}"#)
            codes.append((reply["error"] as? [String: Any])?["code"] as? String ?? (reply["reason"] as? String) ?? reply["status"] as? String ?? "?")
        }
        #expect(codes == ["denied", "recorded", "recorded", "recorded", "recorded", "rateLimited", "rateLimited", "rateLimited"])
        #expect(await logger.diagnostics().webMessagesRateLimited == 3)
        await logger.close()
    }

    @Test("The script the app injects ships with the package")
    func script() throws {
        let script = try ScriptBridge.script
        #expect(script.contains("NFLogger") && script.contains("messageHandlers"))
    }
}
