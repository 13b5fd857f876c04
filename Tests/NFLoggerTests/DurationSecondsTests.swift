import Dispatch
import Foundation
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing
@testable import NFLogger
import NFLogTestSupport

// Durations in seconds at their extremes: saturating, or refused with the field's name.

@Suite("Durations in seconds")
struct DurationSecondsTests {
    @Test("Extreme but valid durations saturate: the logger starts, records, prunes nothing, flushes and closes without trapping")
    func extremeButValid() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.uploadURL = URL(string: "http://127.0.0.1:9/v1/events")
        configuration.policyURL = URL(string: "http://127.0.0.1:9/v1/policy")
        configuration.appKey = "k"
        configuration.upload.interval = 1e18
        configuration.upload.maxBackoff = 86_400
        configuration.upload.initialBackoff = 86_400
        configuration.policyOptions.refreshInterval = 1e300
        configuration.limits.maxEventAge = 1e300
        configuration.limits.spanTimeout = 1e300
        configuration.limits.busyTimeout = 1e12
        configuration.sessionIdleTimeout = 604_800
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.logEvent(name: "x.event").isRecorded)
        let (span, started) = await logger.startEvent(name: "x.span")
        #expect(started.isRecorded)
        logger.requests.maintain()
        logger.suspend()
        logger.resume()
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 1 && diagnostics.openSpans == 1 && diagnostics.prunedEvents == 0 && diagnostics.abandonedSpans == 0)
        #expect(await span.end() == .recorded(span.id))
        let flush = await logger.flush()
        #expect(flush.error != nil && flush.remainingEvents == 2)
        await logger.close()
    }

    @Test("Non-finite durations not covered elsewhere are refused with the field's name", arguments: [
        "limits.busy_timeout_ms", "upload.interval_s", "limits.max_event_age_s", "upload.request_timeout_s",
    ])
    func nonFinite(field: String) {
        let directory = TemporaryDirectory()
        for value in [TimeInterval.nan, .infinity, -.infinity] {
            var configuration = directory.configuration()
            switch field {
            case "limits.busy_timeout_ms": configuration.limits.busyTimeout = value
            case "upload.interval_s": configuration.upload.interval = value
            case "limits.max_event_age_s": configuration.limits.maxEventAge = value
            default: configuration.upload.requestTimeout = value
            }
            #expect {
                try NFLogger(configuration: configuration)
            } throws: { error in
                guard case ConfigurationError.invalidField(let named, _) = error else { return false }
                return named == field
            }
        }
    }
}
