import Dispatch
import Foundation
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing
@testable import NFLogger
import NFLogTestSupport

// Consent changed while threads log: what survives a denial, and who agrees afterwards.

@Suite("Consent races")
struct ConsentRaceTests {
    @Test("pending → denied while threads log: nothing logged under pending survives the denial (20 rounds)")
    func denialRacingAdmissions() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.initialConsent = .pending
        configuration.limits.maxPendingEvents = 1_000_000
        configuration.limits.maxPendingBytes = 256 << 20
        let logger = try NFLogger(configuration: configuration)
        let issued = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        let recordedAfterDenial = Atomic<Int>(0)
        for _ in 0..<20 {
            await logger.setConsent(.pending)
            let stop = Atomic<Bool>(false)
            let denied = Atomic<Bool>(false)
            let group = DispatchGroup()
            for _ in 0..<2 {
                group.enter()
                DispatchQueue.global().async {
                    var calls = 0
                    while !stop.load(ordering: .relaxed) && calls < 50_000 {
                        calls += 1
                        issued.wrappingAdd(1, ordering: .relaxed)
                        let begunAfterDenial = denied.load(ordering: .sequentiallyConsistent)
                        logger.logEvent(name: "race.event") { status in
                            if begunAfterDenial && status.isRecorded { recordedAfterDenial.wrappingAdd(1, ordering: .relaxed) }
                            completed.wrappingAdd(1, ordering: .relaxed)
                        }
                    }
                    group.leave()
                }
            }
            try await Task.sleep(for: .milliseconds(3))
            await withCheckedContinuation { done in
                logger.setConsent(.denied) { _ in done.resume() }
                denied.store(true, ordering: .sequentiallyConsistent)
            }
            try await Task.sleep(for: .milliseconds(1))
            stop.store(true, ordering: .relaxed)
            await withCheckedContinuation { done in group.notify(queue: .global()) { done.resume() } }
        }
        while completed.load(ordering: .relaxed) < issued.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(recordedAfterDenial.load(ordering: .relaxed) == 0)
        let diagnostics = await logger.diagnostics()
        await logger.close()
        let reader = try DatabaseReader(directory.databaseURL)
        let survivors = try reader.int("SELECT count(*) FROM point_events")
        let unheld = try reader.int("SELECT count(*) FROM point_events WHERE held = 0")
        #expect(survivors == 0, "\(survivors) events logged while consent was pending survived the denial, \(unheld) of them not held (ready to upload); \(issued.load(ordering: .relaxed)) calls, \(diagnostics.consentDeletedEvents) deleted")
    }

    @Test("Diagnostics while pending: held events are stored but not counted as ready for upload (held rows are never ready)")
    func heldAreNotWaitingForUpload() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.initialConsent = .pending
        let logger = try NFLogger(configuration: configuration)
        for _ in 0..<5 { #expect(await logger.logEvent(name: "held.event").isRecorded) }
        let (span, _) = await logger.startEvent(name: "held.span")
        #expect(await span.end() == .recorded(span.id))
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.consent == .pending && diagnostics.storedPointEvents == 5 && diagnostics.storedSpanEvents == 1)
        #expect(diagnostics.waitingForUpload == 0,
                "waitingForUpload is documented as 'stored events ready for upload'; it counts \(diagnostics.waitingForUpload) held events")
        await logger.close()
    }

    @Test("Two threads setting consent at once: the facade, the saved file and the uploader end up agreeing (2,000 rounds)")
    func concurrentSetConsent() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let values: [Consent] = [.pending, .granted]
        var mismatches: [String] = []
        for round in 0..<2_000 {
            let first = values[round % 2], second = values[(round + 1) % 2]
            let group = DispatchGroup()
            group.enter(); group.enter()
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    logger.setConsent(index == 0 ? first : second) { _ in group.leave() }
                }
            }
            await withCheckedContinuation { done in group.notify(queue: .global()) { done.resume() } }
            let facade = logger.consent
            let saved = ConsentFile.load(forDatabase: directory.databaseURL)
            if facade != saved {
                mismatches.append("round \(round): facade \(facade), saved \(String(describing: saved))")
                if mismatches.count >= 3 { break }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        await logger.close()
    }
}
