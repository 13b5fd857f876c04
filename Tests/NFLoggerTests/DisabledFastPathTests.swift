import Dispatch
import Foundation
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing
@testable import NFLogger
import NFLogTestSupport

// The Disabled fast path and mode switches at runtime: which calls a switch lets through, under threads.

@Suite("The Disabled fast path")
struct DisabledFastPathTests {
    @Test("Configuration.mode = .disabled is only the starting mode: after `logger.mode = .active` returns, calls are recorded")
    func configuredDisabledThenActive() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration(mode: .disabled))
        #expect(await logger.logEvent(name: "a.before") == .disabled)
        logger.mode = .active
        #expect(logger.mode == .active)
        let status = await logger.logEvent(name: "a.after")
        #expect(status.isRecorded, "logger.mode reads .active, yet the call completed \(status)")
        let (span, started) = await logger.startEvent(name: "a.span")
        #expect(started == .recorded(span.id))
        await logger.close()
    }

    @Test("disabled → active → disabled → active (set at runtime) under 4 logging threads: every call begun after the last switch is recorded, none lost")
    func disabledToActiveUnderLoad() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration(mode: .active)
        configuration.limits.maxPendingEvents = 1_000_000
        configuration.limits.maxPendingBytes = 256 << 20
        let logger = try NFLogger(configuration: configuration)
        logger.mode = .disabled
        let counters = ThreadCounters()
        let lastPhase = ThreadFlag()
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                var after = 0, calls = 0
                while after < 2_000 && calls < 300_000 {
                    calls += 1
                    let begunAfter = lastPhase.isSet
                    if begunAfter { after += 1 }
                    counters.add(\.issued)
                    logger.logEvent(name: "load.event") { status in
                        if begunAfter { counters.add(status.isRecorded ? \.afterRecorded : \.afterRefused) }
                        counters.add(status.isRecorded ? \.recorded : status == .disabled ? \.disabled : \.other)
                    }
                }
                group.leave()
            }.start()
        }
        group.enter()
        Thread {
            for mode in [LogMode.active, .disabled, .active] {
                usleep(1_000)
                logger.mode = mode
            }
            lastPhase.set()
            group.leave()
        }.start()
        await withCheckedContinuation { done in group.notify(queue: .global()) { done.resume() } }
        while counters.value(\.recorded) + counters.value(\.disabled) + counters.value(\.other) < counters.value(\.issued) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(counters.value(\.other) == 0)
        #expect(counters.value(\.afterRecorded) == 8_000 && counters.value(\.afterRefused) == 0,
                "calls begun after the last `mode = .active` returned: \(counters.value(\.afterRecorded)) recorded, \(counters.value(\.afterRefused)) refused")
        #expect(await logger.diagnostics().storedPointEvents == counters.value(\.recorded))
        await logger.close()
    }

    @Test("Handing off after each switch: the next call on another thread obeys the mode just set (1,000 alternations)")
    func handoff() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let caller = DispatchQueue(label: "review14.caller")
        let arrivals = OrderedArrivals()
        let rounds = 1_000
        for round in 0..<rounds {
            logger.mode = round.isMultiple(of: 2) ? .disabled : .active
            caller.async { logger.logEvent(name: "h.event", completion: arrivals.completion(round)) }
            caller.sync {}
        }
        await arrivals.wait(for: rounds)
        // Completions are not in call order (a refusal completes at once, a record after its
        // commit): each status is matched to its round by index.
        let wrong = (0..<rounds).filter { round in
            let status = arrivals.status(round)
            return round.isMultiple(of: 2) ? status != .disabled : status?.isRecorded != true
        }
        #expect(wrong.isEmpty, "\(wrong.count) calls disobeyed the mode set before them; first rounds: \(wrong.prefix(5))")
        await logger.close()
    }

    @Test("The policy's disabled mode wins over the app's active; sdkBelowMinimumVersion and consent denied filter (not disable), whatever the modes; endEvent agrees")
    func refusalsAndTheirStatuses() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Policy.parse(Data(#"{"version":1,"mode":"disabled"}"#.utf8))
        let logger = try NFLogger(configuration: configuration)
        logger.mode = .active
        #expect(await logger.logEvent(name: "p.event") == .disabled)
        #expect(await logger.logEvent(name: "not a name") == .disabled)
        #expect(await logger.endEvent(id: UUID()) == .disabled)
        let (span, started) = await logger.startEvent(name: "p.span")
        #expect(started == .disabled)
        #expect(await span.end() == .disabled)

        await logger.setConsent(.denied)
        #expect(await logger.logEvent(name: "p.event") == .filtered(.consentDenied))
        #expect(await logger.endEvent(id: UUID()) == .filtered(.consentDenied))
        logger.consent = .granted
        #expect(await logger.logEvent(name: "p.event") == .disabled)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.disabled == 6 && diagnostics.filtered == 2 && diagnostics.recorded == 0)
        await logger.close()

        let second = TemporaryDirectory()
        var tooOld = second.configuration()
        tooOld.policyOptions.fallback = try Policy.parse(Data(#"{"version":1,"mode":"active","min_sdk_version":"99.0.0"}"#.utf8))
        let old = try NFLogger(configuration: tooOld)
        #expect(await old.logEvent(name: "o.event") == .filtered(.sdkBelowMinimumVersion))
        old.mode = .disabled
        #expect(await old.logEvent(name: "o.event") == .filtered(.sdkBelowMinimumVersion))
        #expect(await old.endEvent(id: UUID()) == .filtered(.sdkBelowMinimumVersion))
        old.mode = .active
        let (oldSpan, oldStarted) = await old.startEvent(name: "o.span")
        #expect(oldStarted == .filtered(.sdkBelowMinimumVersion))
        #expect(await oldSpan.end() == .filtered(.sdkBelowMinimumVersion))
        await old.close()
    }
}
