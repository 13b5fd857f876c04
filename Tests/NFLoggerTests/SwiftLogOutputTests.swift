import Foundation
import InMemoryLogging
import Logging
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("SwiftLogOutput: events as swift-log messages")
struct SwiftLogOutputTests {
    /// A logger whose every message `handler` keeps (swift-log's in-memory handler).
    static func logger(_ handler: InMemoryLogHandler, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "events") { _ in handler }
        logger.logLevel = level
        return logger
    }

    @Test("One message per event, `event <name>`, with uuid, kind, type, timestamp and the JSON as metadata")
    func oneMessagePerEvent() throws {
        let captured = InMemoryLogHandler()
        let output = SwiftLogOutput(logger: Self.logger(captured))
        #expect(output.id == "swift-log" && output.pattern == "**" && output.level == .debug)
        let point = OutputEvent(
            id: try #require(UUID(uuidString: "0193A7C2-5B1E-7C3D-9F00-1A2B3C4D5E6F")), kind: .point, name: "ui.tap", type: "user_action",
            timestamp: Date(timeIntervalSince1970: 1_795_000_000.25), json: #"{"uuid":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","name":"ui.tap"}"#
        )
        let span = OutputEvent(
            id: UUID(), kind: .span, name: "checkout.pay", type: "default",
            timestamp: Date(timeIntervalSince1970: 0), json: #"{"name":"checkout.pay"}"#
        )
        output.emit([point, span])

        let messages = captured.entries
        #expect(messages.count == 2)
        #expect(messages.map(\.message.description) == ["event ui.tap", "event checkout.pay"])
        #expect(messages.allSatisfy { $0.level == .debug })
        #expect(messages[0].metadata == [
            "uuid": "0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f",
            "kind": "point",
            "type": "user_action",
            "timestamp": "2026-11-18T11:06:40.250Z",
            "event": #"{"uuid":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","name":"ui.tap"}"#,
        ])
        #expect(messages[1].metadata["kind"] == "span")
        #expect(messages[1].metadata["uuid"] == .string(span.id.uuidString.lowercased()))
        #expect(messages[1].metadata["timestamp"] == "1970-01-01T00:00:00.000Z")
        #expect(messages[1].metadata["event"] == #"{"name":"checkout.pay"}"#)
    }

    @Test("Messages go at the configured level, and a logger set above it gets none")
    func level() {
        let event = OutputEvent(id: UUID(), kind: .aggregate, name: "net.request", type: "default", timestamp: Date(), json: "{}")
        let captured = InMemoryLogHandler()
        SwiftLogOutput(id: "console", logger: Self.logger(captured), level: .notice, pattern: "net.**").emit([event])
        #expect(captured.entries.map(\.level) == [.notice])
        #expect(captured.entries.first?.metadata["kind"] == "aggregate")

        let quiet = InMemoryLogHandler()
        SwiftLogOutput(logger: Self.logger(quiet, level: .info)).emit([event])
        #expect(quiet.entries.isEmpty)
    }

    @Test("It is a best-effort output, and a valid one in a configuration")
    func configuration() throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        let output = SwiftLogOutput(logger: Self.logger(InMemoryLogHandler()))
        configuration.outputs = [output]
        try configuration.validate()
        #expect((configuration.outputs[0] as? any BestEffortOutput) != nil)
    }
}
