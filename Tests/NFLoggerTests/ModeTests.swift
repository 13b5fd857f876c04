import Foundation
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("Modes and their statuses")
struct ModeTests {
    @Test("Disabled mode completes .disabled and touches nothing, not even validation")
    func disabled() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration(mode: .disabled))
        #expect(await logger.logEvent(name: "ui.tap") == .disabled)
        #expect(await logger.logEvent(name: "not a valid name!") == .disabled)
        let (span, started) = await logger.startEvent(name: "screen.home")
        #expect(started == .disabled)
        #expect(await span.end() == .disabled)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.disabled == 4)
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.storedSpanEvents == 0)
    }

    @Test("Active mode records every valid event")
    func active() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration(mode: .active))
        let status = await logger.logEvent(name: "ui.tap", parameters: ["button": "buy"])
        let id = try #require(status.recordedID)
        let (span, started) = await logger.startEvent(name: "screen.home")
        #expect(started == .recorded(span.id))
        #expect(await span.end() == .recorded(span.id))
        await logger.close()

        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.int("SELECT count(*) FROM point_events") == 1)
        let stored = try reader.rows("SELECT uuid FROM point_events")
        #expect(stored.first?["uuid"] as? [UInt8] == id.bytes)
        #expect(try reader.int("SELECT count(*) FROM span_events WHERE end_ms IS NOT NULL") == 1)
    }

    @Test("Specific mode records what its patterns select and filters the rest")
    func specific() async throws {
        let directory = TemporaryDirectory()
        let rules = try EventRules(allow: ["ui.**", "net.*"])
        let logger = try NFLogger(configuration: directory.configuration(mode: .specific(rules)))
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        #expect(await logger.logEvent(name: "ui").isRecorded)  // `**` matches zero parts
        #expect(await logger.logEvent(name: "net.request").isRecorded)
        #expect(await logger.logEvent(name: "net.request.retry") == .filtered(.notSelected))
        #expect(await logger.logEvent(name: "app.launch") == .filtered(.notSelected))
        // A filtered span's end says the same, and nothing is stored for it.
        let (span, started) = await logger.startEvent(name: "screen.home")
        #expect(started == .filtered(.notSelected))
        #expect(await span.end() == .filtered(.notSelected))
        // Specific mode still validates names before matching them.
        #expect(await logger.logEvent(name: "ui..tap").failure == .invalidName("ui..tap", reason: "it has an empty part (a leading, trailing or doubled '.')"))
        await logger.close()

        let reader = try DatabaseReader(directory.databaseURL)
        let names = try reader.rows("SELECT name FROM point_events ORDER BY id").compactMap { $0["name"] as? String }
        #expect(names == ["ui.tap", "ui", "net.request"])
        #expect(try reader.int("SELECT count(*) FROM span_events") == 0)
    }

    @Test("The mode can change at runtime; the next call obeys the new mode")
    func switchAtRuntime() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration(mode: .active))
        #expect(await logger.logEvent(name: "a.one").isRecorded)
        logger.mode = .disabled
        #expect(logger.mode == .disabled)
        #expect(await logger.logEvent(name: "a.two") == .disabled)
        logger.mode = .specific(try EventRules(allow: ["b.*"]))
        #expect(await logger.logEvent(name: "a.three") == .filtered(.notSelected))
        #expect(await logger.logEvent(name: "b.four").isRecorded)
        logger.mode = .active
        #expect(await logger.logEvent(name: "a.five").isRecorded)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 3)
        #expect((diagnostics.recorded, diagnostics.filtered, diagnostics.disabled) == (3, 1, 1))
    }

    @Test("A span started while active and ended after the switch to disabled reports .disabled and stays open")
    func spanAcrossDisable() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let (span, started) = await logger.startEvent(name: "screen.home")
        #expect(started.isRecorded)
        logger.mode = .disabled
        #expect(await span.end() == .disabled)
        logger.mode = .active
        #expect(await span.end() == .recorded(span.id))
    }
}
