import Foundation
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("Sessions")
struct SessionTests {
    func makeLogger(_ directory: TemporaryDirectory, _ clock: ManualClock) throws -> NFLogger {
        var configuration = directory.configuration()
        configuration.sessionIdleTimeout = 30
        return try NFLogger(configuration: configuration, clock: clock)
    }

    @Test("A short trip to the background continues the session; a long one starts a new session")
    func idleGap() async throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        let logger = try makeLogger(directory, clock)
        let first = logger.sessionID
        #expect(await logger.logEvent(name: "app.launch").isRecorded)

        logger.suspend()
        clock.advance(29)
        logger.resume()
        #expect(logger.sessionID == first)
        #expect(await logger.logEvent(name: "app.foreground").isRecorded)

        logger.suspend()
        let suspendedAt = clock.wallMilliseconds()
        clock.advance(31)
        logger.resume()
        let second = logger.sessionID
        #expect(second != first)
        #expect(await logger.logEvent(name: "app.foreground").isRecorded)
        await logger.close()

        let reader = try DatabaseReader(directory.databaseURL)
        let sessions = try reader.rows("SELECT uuid, started_ms, ended_ms FROM sessions ORDER BY id")
        #expect(sessions.count == 2)
        #expect(sessions[0]["uuid"] as? [UInt8] == first.bytes)
        #expect(sessions[0]["ended_ms"] as? Int64 == suspendedAt)
        #expect(sessions[1]["uuid"] as? [UInt8] == second.bytes)
        #expect(sessions[1]["started_ms"] as? Int64 == clock.wallMilliseconds())
        let perSession = try reader.rows("SELECT session_id, count(*) AS n FROM point_events GROUP BY session_id ORDER BY session_id")
        #expect(perSession.map { $0["n"] as? Int64 } == [2, 1])
    }

    @Test("resume() without suspend() changes nothing; suspend() twice keeps the first time")
    func unpaired() throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock()
        let logger = try makeLogger(directory, clock)
        let first = logger.sessionID
        clock.advance(120)
        logger.resume()
        #expect(logger.sessionID == first)
        logger.suspend()
        clock.advance(20)
        logger.suspend()
        clock.advance(20)
        logger.resume()  // 40 s since the first suspend
        #expect(logger.sessionID != first)
    }

    @Test("A new logger starts a new session")
    func perLogger() throws {
        let directory = TemporaryDirectory()
        let a = try NFLogger(configuration: directory.configuration())
        let b = try NFLogger(configuration: directory.configuration())
        #expect(a.sessionID != b.sessionID)
    }
}
