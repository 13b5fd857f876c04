import Foundation
import NFLoggerTesting
import Testing
@testable import NFLogger
@_spi(NFLogShared) import NFLogSupport
import NFLogTestSupport

/// Rows that become ready without an app call (no `recorded(_:)`): with the interval's timer
/// now one-shot and armed only by recorded events, nothing tells the uploader about them.
@Suite("Rows made ready without a call (an abandoned span, a retried consent) travel on the interval")
struct ReadyRowsUploadTests {
    @Test("A span the Pruner's pass abandons (now ready) is uploaded within an interval, with no further call")
    func abandonedSpanTravels() async throws {
        let transport = RecordingTransport()
        let clock = TimerClock()
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.limits.spanTimeout = 1
        let logger = try NFLogger(configuration: configuration, clock: clock)
        let (_, status) = await logger.startEvent(name: "screen.forgotten")
        #expect(status.isRecorded)

        // The interval fires at 30 s (nothing ready: the span is open); the pass at 60 s abandons
        // the span, which makes it ready. Two more minutes: several intervals.
        await clock.idle(logger, minutes: 3)
        #expect(await logger.diagnostics().abandonedSpans == 1)
        _ = try await transport.waitForEvents(count: 1, timeout: hangLimitSeconds)
        await logger.close()
    }

    @Test("Held events released by an owed consent (its first transaction failed) are uploaded within an interval")
    func owedConsentReleaseTravels() async throws {
        let transport = RecordingTransport()
        let clock = TimerClock()
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration, clock: clock)
        #expect(await logger.logEvent(name: "held.event").isRecorded)

        // Fault injection: releasing the held rows fails once (as a full or busy database would).
        let outside = try SQLiteConnection(path: configuration.databaseURL.path, busyTimeoutMilliseconds: 5_000)
        try outside.execute("""
            CREATE TRIGGER block_release BEFORE UPDATE OF held ON point_events
            BEGIN SELECT RAISE(ABORT, 'blocked by the test'); END
            """)
        _ = await logger.setConsent(.granted)  // the uploader is told now, finds nothing ready
        // The fault lasts a minute (a full disk, say): the interval the event armed fires meanwhile
        // and finds nothing ready, as does every retry of the owed consent.
        await clock.idle(logger, minutes: 1)
        #expect(try DatabaseReader(configuration.databaseURL).int("SELECT count(*) FROM point_events WHERE held = 1") == 1)
        try outside.execute("DROP TRIGGER block_release")

        // The owed consent is applied by the next drain or the Pruner's pass: the event is ready.
        await clock.idle(logger, minutes: 3)
        let reader = try DatabaseReader(configuration.databaseURL)
        #expect(try reader.int("SELECT count(*) FROM point_events WHERE held = 0") + transport.events.count >= 1,
                "the owed consent was applied")
        _ = try await transport.waitForEvents(count: 1, timeout: hangLimitSeconds)
        await logger.close()
    }
}
