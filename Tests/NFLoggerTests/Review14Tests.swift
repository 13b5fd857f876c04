import Dispatch
import Foundation
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing
@testable import NFLogger

// Review 14: typed parameters encoded on the queue, the in-memory bound, the Disabled fast path,
// consent races. Each test says what it pins; the ones expected to fail name the defect.

/// Holds the database's write lock from a connection of the test's own (as another process
/// would), so the logger's drain waits in `BEGIN IMMEDIATE` while the test queues calls.
final class Review14WriteLock: @unchecked Sendable {
    // @unchecked: the connection is used by the owning test only, one call at a time.
    private let connection: SQLiteConnection
    private var held = true

    init(_ url: URL) throws {
        connection = try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: 5_000)
        try connection.execute("BEGIN IMMEDIATE")
    }

    func release() {
        guard held else { return }
        held = false
        try? connection.execute("ROLLBACK")
    }

    deinit { release() }
}

/// Statuses in the order their completions ran, each tagged with its call's index.
final class Review14Arrivals: Sendable {
    private let arrived = Mutex<[(Int, LogStatus)]>([])
    private let log = StatusLog()

    func completion(_ index: Int) -> LogCompletion {
        { status in
            self.arrived.withLock { $0.append((index, status)) }
            self.log.append(status)
        }
    }

    func wait(for count: Int) async { await log.wait(for: count) }

    var order: [Int] { arrived.withLock { $0.map(\.0) } }

    func status(_ index: Int) -> LogStatus? { arrived.withLock { $0.first { $0.0 == index }?.1 } }
}

/// Counters any thread may bump.
final class Review14Counters: Sendable {
    struct Values { var issued = 0, recorded = 0, disabled = 0, other = 0, afterRecorded = 0, afterRefused = 0 }
    private let values = Mutex(Values())
    func add(_ key: WritableKeyPath<Values, Int> & Sendable) { values.withLock { $0[keyPath: key] += 1 } }
    func value(_ key: KeyPath<Values, Int> & Sendable) -> Int { values.withLock { $0[keyPath: key] } }
}

final class Review14Flag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { flag.load(ordering: .sequentiallyConsistent) }
}

@Suite("Review 14: parameters encoded on the queue")
struct Review14ParameterTests {
    @Test("In one drain, each request whose parameters fail fails alone with its key path; the rest are recorded; completions run in call order")
    func failuresInOneDrain() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxParametersBytes = 100
        configuration.limits.busyTimeout = 10
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.logEvent(name: "warm.up").isRecorded)  // the schema exists

        let lock = try Review14WriteLock(directory.databaseURL)
        let arrivals = Review14Arrivals()
        logger.logEvent(name: "blocker", completion: arrivals.completion(0))  // its drain waits for the lock
        logger.logEvent(name: "a.ok", parameters: ["i": 1], completion: arrivals.completion(1))
        logger.logEvent(name: "a.nan", parameters: ["x": Double.nan], completion: arrivals.completion(2))
        logger.logEvent(name: "a.nested", parameters: ["user": ["tags": ["a", "b", .double(.infinity)] as LogValue] as LogValue],
                        completion: arrivals.completion(3))
        let failedSpan = logger.startEvent(name: "s.bad", parameters: ["k": Float.nan], completion: arrivals.completion(4))
        failedSpan.end(completion: arrivals.completion(5))
        logger.logEvent(name: "a.big", parameters: ["s": String(repeating: "x", count: 200)], completion: arrivals.completion(6))
        let span = logger.startEvent(name: "s.good", parameters: ["ok": 1], completion: arrivals.completion(7))
        span.end(parameters: ["bad": [[1, .double(-.infinity)] as LogValue]], completion: arrivals.completion(8))
        span.end(parameters: ["fine": true], completion: arrivals.completion(9))
        let none: Int? = nil
        logger.logEvent(name: "a.last", parameters: ["opt": none, "f": Float(1.5), "list": [Int?.some(1), nil]], completion: arrivals.completion(10))
        logger.endEvent(id: failedSpan.id, parameters: ["late": 1], completion: arrivals.completion(11))
        try await Task.sleep(for: .milliseconds(150))
        lock.release()
        await arrivals.wait(for: 12)

        #expect(arrivals.order == Array(0...11), "completions must run in the order of the calls")
        #expect(arrivals.status(0)?.isRecorded == true && arrivals.status(1)?.isRecorded == true)
        #expect(arrivals.status(2)?.failure == .invalidParameter(key: "x", reason: "nan is not a finite number; JSON has no NaN or infinity"))
        if case .invalidParameter(let key, _)? = arrivals.status(3)?.failure { #expect(key == "user.tags[2]") } else {
            Issue.record("expected invalidParameter for user.tags[2], got \(String(describing: arrivals.status(3)))")
        }
        if case .invalidParameter(let key, _)? = arrivals.status(4)?.failure { #expect(key == "k") } else {
            Issue.record("expected invalidParameter for k, got \(String(describing: arrivals.status(4)))")
        }
        #expect(arrivals.status(5) == .failed(.unknownSpan(failedSpan.id)), "the handle of a start that failed ends with unknownSpan")
        if case .parametersTooLarge(_, let limit)? = arrivals.status(6)?.failure { #expect(limit == 100) } else {
            Issue.record("expected parametersTooLarge, got \(String(describing: arrivals.status(6)))")
        }
        #expect(arrivals.status(7) == .recorded(span.id))
        if case .invalidParameter(let key, _)? = arrivals.status(8)?.failure { #expect(key == "bad[0][1]") } else {
            Issue.record("expected invalidParameter for bad[0][1], got \(String(describing: arrivals.status(8)))")
        }
        #expect(arrivals.status(9) == .recorded(span.id), "the span stays open after an end whose parameters failed")
        #expect(arrivals.status(10)?.isRecorded == true)
        #expect(arrivals.status(11) == .failed(.unknownSpan(failedSpan.id)))

        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.recorded == 6 && diagnostics.failed == 7)
        await logger.close()
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.rows("SELECT name FROM point_events ORDER BY id").compactMap { $0["name"] as? String }
                == ["warm.up", "blocker", "a.ok", "a.last"])
        let spans = try reader.rows("SELECT name, end_parameters FROM span_events")
        #expect(spans.count == 1 && spans.first?["name"] as? String == "s.good")
        #expect(try jsonObject(spans.first?["end_parameters"])["fine"] as? Bool == true)
        let last = try jsonObject(try reader.rows("SELECT parameters FROM point_events WHERE name = 'a.last'").first?["parameters"])
        #expect(last["opt"] is NSNull && last["f"] as? Double == 1.5)
        #expect((last["list"] as? [Any])?.count == 2 && (last["list"] as? [Any])?.last is NSNull)
    }

    @Test("The in-memory byte bound counts what the parameters hold: a burst of 30 KB parameters behind a stalled drain meets backpressure")
    func pendingBytesCountParameters() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        // The smallest bound validation allows: "twice max_parameters_bytes plus 1024", so that
        // "an event with maximal parameters can be queued" (Configuration.validate()).
        configuration.limits.maxPendingBytes = 2 * configuration.limits.maxParametersBytes + 1024
        configuration.limits.maxPendingEvents = 10_000
        configuration.limits.busyTimeout = 10
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.logEvent(name: "warm.up").isRecorded)

        let lock = try Review14WriteLock(directory.databaseURL)
        let calls = 64
        let log = StatusLog()
        for index in 0..<calls {
            // A fresh 30,000-byte string each time: the queue holds it until the drain encodes it.
            let blob = String(repeating: Character(UnicodeScalar(UInt8(97 + index % 26))), count: 30_000)
            logger.logEvent(name: "big.event", parameters: ["blob": blob], completion: log.completion)
        }
        try await Task.sleep(for: .milliseconds(100))
        lock.release()
        await log.wait(for: calls)
        let backpressured = log.statuses.filter { if case .failed(.backpressure) = $0 { true } else { false } }.count
        let recorded = log.statuses.filter(\.isRecorded).count
        // 64 × 30 KB ≈ 1.9 MB were held in memory at once against a 66,560-byte bound.
        #expect(backpressured > 0, "\(recorded) calls of 30 KB each were queued against a \(configuration.limits.maxPendingBytes)-byte bound")
        await logger.close()
    }

    @Test("LogParameters(jsonObject:) keeps a Swift Float's shortest text, as the typed parameter does")
    func jsonObjectFloat() throws {
        let encoder = ParameterEncoder(maxBytes: 1024)
        let typed = String(decoding: try #require(try encoder.encode(["f": Float(1.1)])), as: UTF8.self)
        #expect(typed == #"{"f":1.1}"#)
        let untyped = String(decoding: try #require(try encoder.encode(try LogParameters(jsonObject: ["f": Float(1.1)]))), as: UTF8.self)
        #expect(untyped == typed, "a Float in [String: Any] is sent as \(untyped)")
    }

    @Test("LogParameters(jsonObject:) and the encoder agree on the nesting limit: what one accepts the other records")
    func jsonObjectDepthAgreesWithEncoder() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        func nested(_ levels: Int, innermost: Any) -> Any {
            var value = innermost
            for _ in 0..<levels { value = ["n": value] as [String: Any] }
            return value
        }
        // 31 objects below "root" with a scalar at the bottom: both accept.
        let deepest = try LogParameters(jsonObject: ["root": nested(31, innermost: 1)])
        #expect(await logger.logEvent(name: "deep.ok", parameters: deepest).isRecorded)
        // 32 objects with a scalar: both refuse.
        #expect(throws: NFLoggerError.self) { try LogParameters(jsonObject: ["root": nested(32, innermost: 1)]) }
        // 31 objects with an empty object at the bottom (32 below the top): whatever the answer, the same from both.
        let converted = Result { () throws(NFLoggerError) -> LogParameters in
            try LogParameters(jsonObject: ["root": nested(31, innermost: [String: Any]())])
        }
        if case .success(let parameters) = converted {
            let status = await logger.logEvent(name: "deep.edge", parameters: parameters)
            #expect(status.isRecorded, "LogParameters(jsonObject:) accepted it, but the log call failed: \(status)")
        }
    }

    @Test("JSONSerialization's NSNumbers on Linux: booleans stay booleans, integers integers, at every depth; 2^63 is refused by path")
    func foundationNumbersNested() throws {
        let source = #"{"t":true,"f":false,"one":1,"zero":0,"d":1.5,"arr":[true,1,0,false,{"deep":[false,2]}],"max":9223372036854775807}"#
        let parsed = try #require(JSONSerialization.jsonObject(with: Data(source.utf8)) as? [String: Any])
        let encoder = ParameterEncoder(maxBytes: 4096)
        let text = String(decoding: try #require(try encoder.encode(try LogParameters(jsonObject: parsed))), as: UTF8.self)
        for fragment in [#""t":true"#, #""f":false"#, #""one":1"#, #""zero":0"#, #""d":1.5"#,
                         #""arr":[true,1,0,false,{"deep":[false,2]}]"#, #""max":9223372036854775807"#] {
            #expect(text.contains(fragment), "\(fragment) not in \(text)")
        }
        let over = try #require(JSONSerialization.jsonObject(with: Data(#"{"a":{"b":[0,9223372036854775808]}}"#.utf8)) as? [String: Any])
        do {
            _ = try LogParameters(jsonObject: over)
            Issue.record("2^63 must be refused")
        } catch {
            guard case .invalidParameter(let key, _) = error else { Issue.record("got \(error)"); return }
            #expect(key == "a.b[1]")
        }
    }
}

@Suite("Review 14: the Disabled fast path")
struct Review14DisabledTests {
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
        let counters = Review14Counters()
        let lastPhase = Review14Flag()
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
        let arrivals = Review14Arrivals()
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

@Suite("Review 14: consent races")
struct Review14ConsentRaceTests {
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

@Suite("Review 14: durations in seconds")
struct Review14DurationTests {
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
