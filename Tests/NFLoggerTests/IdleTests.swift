import Foundation
import NFLoggerTesting
import Testing
@testable import NFLogger
import NFLogTestSupport

/// With nothing to send and nothing stored, a logger costs the phone nothing: no timer wakes its
/// queue and no SQLite statement runs. Timers run on ``TimerClock``: the test moves time by hand.
@Suite("Idle: no wake-up and no SQLite statement while there is nothing to do")
struct IdleTests {
    @Test("Once its events are delivered and the next pass finds nothing stored, ten idle minutes run no timer and no statement; the next event arms the timers again and travels on the interval")
    func idleCostsNothing() async throws {
        let transport = RecordingTransport()
        let clock = TimerClock()
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.upload.countThreshold = 500  // the last step's event goes on the interval, not at once
        let logger = try NFLogger(configuration: configuration, clock: clock)
        for index in 0..<20 { _ = await logger.logEvent(name: "ui.tap", parameters: ["index": index]) }
        #expect(await logger.flush().error == nil)
        #expect(transport.events.count == 20)

        // The interval's timer and the Pruner's pass were armed by the events; each fires once,
        // finds nothing, and is not armed again.
        await clock.idle(logger, minutes: 2)
        #expect(clock.armed == 0, "no timer armed with nothing stored")
        let statements = await logger.statementsRun()
        let fired = clock.fired

        await clock.idle(logger, minutes: 10)
        #expect(await logger.statementsRun() == statements, "an idle logger runs no SQLite statement")
        #expect(clock.fired == fired, "an idle logger wakes for no timer")
        #expect(clock.armed == 0)

        // Work arms them again: one event, below the count threshold, goes when the interval ends.
        #expect(await logger.logEvent(name: "ui.after.idle").isRecorded)
        #expect(await logger.statementsRun() > statements)
        #expect(clock.armed >= 1)
        clock.advance(configuration.upload.interval)
        try await transport.waitForEvents(count: 21, timeout: hangLimitSeconds)
        #expect(transport.events.last?.name == "ui.after.idle")
        await logger.close()
    }
}
