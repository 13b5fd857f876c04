import Dispatch
import Foundation
import NFLoggerTesting
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing
@testable import NFLogger
import NFLogTestSupport

/// A filter made of a closure, for the tests.
private struct ClosureFilter: EventFilter {
    let name: String
    let pattern: String
    let body: @Sendable (FilteredEvent) throws -> [FilteredEvent]

    init(_ name: String, pattern: String = "**", _ body: @escaping @Sendable (FilteredEvent) throws -> [FilteredEvent]) {
        self.name = name
        self.pattern = pattern
        self.body = body
    }

    func apply(_ event: FilteredEvent) throws -> [FilteredEvent] { try body(event) }
}

private struct FilterError: Error, CustomStringConvertible {
    var description: String { "no experiment for this user" }
}

/// Holds the logger's queue inside a filter (on an event named `gate`) until the test has
/// queued everything it wants written in the next transaction: all of it is then drained as one
/// batch.
private final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    let entered = DispatchSemaphore(value: 0)

    var filter: ClosureFilter {
        ClosureFilter("gate", pattern: "gate") { [self] event in
            entered.signal()
            _ = semaphore.wait(timeout: .now() + hangLimitSeconds)
            return [event]
        }
    }

    /// Waits (off the cooperative pool) until the filter holds the queue.
    func waitUntilEntered() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                _ = self.entered.wait(timeout: .now() + hangLimitSeconds)
                continuation.resume()
            }
        }
    }

    func open() { semaphore.signal() }
}

@Suite("Filters: change, replace or drop events on the queue, before aggregation and storage")
struct FilterTests {
    func logger(_ directory: TemporaryDirectory, _ filters: [any EventFilter], clock: ManualClock = ManualClock()) throws -> NFLogger {
        var configuration = directory.configuration()
        configuration.filters = filters
        return try NFLogger(configuration: configuration, clock: clock)
    }

    /// Every stored point event: name → (uuid, parameters).
    func points(_ url: URL) throws -> [(name: String, uuid: UUID, parameters: [String: Any])] {
        try DatabaseReader(url).rows("SELECT name, uuid, parameters FROM point_events ORDER BY id").map { row in
            (row["name"] as? String ?? "", UUID(uuid: try #require(row["uuid"] as? [UInt8]).uuidTuple), try jsonObject(row["parameters"]))
        }
    }

    @Test("Common parameters reach the upload; an event's own value wins unless overwrite")
    func commonParameters() async throws {
        let transport = RecordingTransport()
        var configuration = transport.configuration()
        configuration.policyURL = nil
        configuration.filters = [
            CommonParametersFilter(pattern: "ui.**", parameters: ["experiment": "checkout-b", "tier": "gold"]),
            CommonParametersFilter(name: "forced", pattern: "net.**", parameters: ["tier": "forced"], overwrite: true),
        ]
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.logEvent(name: "ui.tap", parameters: ["tier": "silver", "button": "pay"]).isRecorded)
        #expect(await logger.logEvent(name: "ui.scroll").isRecorded)
        #expect(await logger.logEvent(name: "net.request", parameters: ["tier": "silver"]).isRecorded)
        #expect(await logger.flush().error == nil)
        await logger.close()

        let tap = try #require(transport.events(named: "ui.tap").first)
        #expect(tap.parameters == ["tier": "silver", "button": "pay", "experiment": "checkout-b"])
        let scroll = try #require(transport.events(named: "ui.scroll").first)
        #expect(scroll.parameters == ["tier": "gold", "experiment": "checkout-b"])
        let request = try #require(transport.events(named: "net.request").first)
        #expect(request.parameters == ["tier": "forced"], "overwrite replaces the event's own value; ui.** does not match")
    }

    @Test("The redactor removes or replaces named keys, nested too, in starts and span ends: the plaintext never reaches the database file")
    func redaction() async throws {
        let directory = TemporaryDirectory()
        let logger = try logger(directory, [
            ParameterRedactor(keys: ["email", "password"]),
            ParameterRedactor(name: "mask-phone", pattern: "signup.**", keys: ["phone"], replacement: .replace(with: "***")),
        ])
        let secrets = ["alice.secret@example.com", "hunter2-secret-pw", "bob.nested@example.com", "555-0100-9999", "end-secret-pw"]
        #expect(await logger.logEvent(name: "signup.submit", parameters: [
            "email": secrets[0], "password": secrets[1], "plan": "pro-plan-kept",
            "user": ["Email": secrets[2], "age": "42"], "phone": secrets[3],
        ]).isRecorded)
        let (span, started) = await logger.startEvent(name: "auth.login", parameters: ["email": secrets[0], "method": "otp"])
        #expect(started.isRecorded)
        // The end carries no name: every redactor applies, whatever its pattern.
        #expect(await span.end(parameters: ["password": secrets[4], "phone": "555", "ok": true]).isRecorded)
        await logger.close()

        let stored = try points(directory.databaseURL)
        #expect(stored.count == 1)
        let parameters = try #require(stored.first?.parameters)
        #expect(Set(parameters.keys) == ["plan", "user", "phone"])
        #expect(parameters["phone"] as? String == "***")
        #expect((parameters["user"] as? [String: Any])?.keys.sorted() == ["age"], "nested keys, whatever their case")
        let spans = try DatabaseReader(directory.databaseURL).rows("SELECT parameters, end_parameters FROM span_events")
        #expect(try spans.map { try jsonObject($0["parameters"]).keys.sorted() } == [["method"]])
        let end = try jsonObject(try #require(spans.first)["end_parameters"])
        #expect(end.keys.sorted() == ["ok", "phone"] && end["phone"] as? String == "***" && end["ok"] as? Bool == true)

        // Grep the file's bytes (and whatever sits beside it: WAL, journal) for each secret.
        let files = try FileManager.default.contentsOfDirectory(at: directory.url, includingPropertiesForKeys: nil)
        #expect(files.contains { $0.lastPathComponent == "events.sqlite" })
        // What was not redacted is in the files, as plain text: the search below would find a secret.
        #expect(files.contains { (try? Data(contentsOf: $0))?.range(of: Data("pro-plan-kept".utf8)) != nil })
        for file in files {
            let bytes = try Data(contentsOf: file)
            for secret in secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) found in \(file.lastPathComponent)")
            }
        }
    }

    @Test("A filter that drops an event completes .filtered(.droppedByFilter(name)) and stores nothing; ending a dropped span fails")
    func dropping() async throws {
        let directory = TemporaryDirectory()
        let logger = try logger(directory, [ClosureFilter("drop-debug", pattern: "debug.**") { _ in [] }])
        #expect(await logger.logEvent(name: "debug.trace", parameters: ["x": 1]) == .filtered(.droppedByFilter("drop-debug")))
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        let (span, started) = await logger.startEvent(name: "debug.span")
        #expect(started == .filtered(.droppedByFilter("drop-debug")))
        #expect(await span.end() == .failed(.unknownSpan(span.id)))
        #expect(LogStatus.filtered(.droppedByFilter("drop-debug")).description == #"filtered (dropped by the filter "drop-debug")"#)
        let diagnostics = await logger.diagnostics()
        await logger.close()
        #expect(try points(directory.databaseURL).map(\.name) == ["ui.tap"])
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM span_events") == 0)
        #expect(diagnostics.storedPointEvents == 1)
    }

    @Test("A throwing filter fails only its events; the rest of the same transaction is recorded")
    func throwingFilterFailsAlone() async throws {
        let directory = TemporaryDirectory()
        let gate = Gate()
        let logger = try logger(directory, [
            gate.filter,
            ClosureFilter("experiments", pattern: "ui.*") { event in
                if event.parameters["bad"] != nil { throw FilterError() }
                return [event]
            },
        ])
        let gateStatus = StatusLog()
        logger.logEvent(name: "gate", completion: gateStatus.completion)
        await gate.waitUntilEntered()
        // Queued while the filter holds the queue: all 300 are drained into one transaction.
        let log = Mutex<[Int: LogStatus]>([:])
        let done = StatusLog()
        DispatchQueue.concurrentPerform(iterations: 300) { index in
            let parameters: LogParameters = index % 7 == 0 ? ["bad": true, "i": index] : ["i": index]
            logger.logEvent(name: "ui.tap", parameters: parameters) { status in
                log.withLock { $0[index] = status }
                done.append(status)
            }
        }
        gate.open()
        await done.wait(for: 300)
        await gateStatus.wait(for: 1)
        let statuses = log.withLock { $0 }
        for (index, status) in statuses {
            if index % 7 == 0 {
                #expect(status == .failed(.filterFailed(filter: "experiments", reason: "no experiment for this user")))
            } else {
                #expect(status.isRecorded, "\(index): \(status)")
            }
        }
        #expect(NFLoggerError.filterFailed(filter: "experiments", reason: "boom").description == #"the filter "experiments" failed: boom"#)
        await logger.close()
        let stored = try points(directory.databaseURL)
        let bad = (0..<300).filter { $0 % 7 == 0 }.count
        #expect(stored.count == 300 - bad + 1)
        #expect(!stored.contains { ($0.parameters["i"] as? Int).map { $0 % 7 == 0 } ?? false })
    }

    @Test("Replacement: the first event keeps the call's id; the others get new UUIDv7s; statuses stay with their calls in a mixed batch")
    func replacementAndIndexMapping() async throws {
        let directory = TemporaryDirectory()
        let gate = Gate()
        let logger = try logger(directory, [
            gate.filter,
            ClosureFilter("split", pattern: "{checkout,order}.done") { event in
                let count = (event.parameters["items"] as? Int) ?? 1
                return [event] + (0..<count).map { FilteredEvent(name: "checkout.item", type: "item", parameters: ["n": $0, "of": event.name]) }
            },
            ClosureFilter("drop", pattern: "drop.me") { _ in [] },
            ClosureFilter("fail", pattern: "fail.me") { _ in throw FilterError() },
            ClosureFilter("span-split", pattern: "span.split") { event in [event, event] },
        ])
        logger.logEvent(name: "gate", completion: nil)
        await gate.waitUntilEntered()
        let names = ["checkout.done", "drop.me", "plain.a", "fail.me", "order.done", "plain.b", "span.split"]
        let log = StatusLog()
        let statuses = Mutex<[String: LogStatus]>([:])
        for name in names {
            let completion: LogCompletion = { status in
                statuses.withLock { $0[name] = status }
                log.append(status)
            }
            if name == "span.split" {
                logger.startEvent(name: name, completion: completion)
            } else {
                logger.logEvent(name: name, parameters: name == "checkout.done" ? ["items": 2] : ["items": 3], completion: completion)
            }
        }
        gate.open()
        await log.wait(for: names.count)
        let by = statuses.withLock { $0 }
        #expect(by["drop.me"] == .filtered(.droppedByFilter("drop")))
        #expect(by["fail.me"] == .failed(.filterFailed(filter: "fail", reason: "no experiment for this user")))
        #expect(by["span.split"] == .failed(.filterFailed(filter: "span-split", reason: "a span cannot be replaced by several events")))
        await logger.close()

        let stored = try points(directory.databaseURL)
        #expect(stored.map(\.name) == ["gate", "checkout.done", "checkout.item", "checkout.item", "plain.a",
                                       "order.done", "checkout.item", "checkout.item", "checkout.item", "plain.b"])
        // Each recorded call's id is the row of its own (first) event.
        for name in ["checkout.done", "plain.a", "order.done", "plain.b"] {
            let id = try #require(by[name]?.recordedID, "\(name): \(String(describing: by[name]))")
            #expect(stored.first { $0.uuid == id }?.name == name)
        }
        let items = stored.filter { $0.name == "checkout.item" }
        #expect(items.map { $0.parameters["of"] as? String } == ["checkout.done", "checkout.done", "order.done", "order.done", "order.done"])
        #expect(Set(stored.map(\.uuid)).count == stored.count, "every added event has an id of its own")
        #expect(items.allSatisfy { $0.uuid.uuid.6 >> 4 == 7 }, "UUIDv7")
        let types = try DatabaseReader(directory.databaseURL).rows("SELECT type FROM point_events WHERE name = 'checkout.item'")
        #expect(types.allSatisfy { $0["type"] as? String == "item" })
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM span_events") == 0)
    }

    @Test("A span start may be renamed (and then ended), not turned into a point event; one call becomes at most 64 events")
    func spansAndFanOutLimit() async throws {
        let directory = TemporaryDirectory()
        let logger = try logger(directory, [
            ClosureFilter("rename-span", pattern: "screen.old") { event in
                var renamed = event
                renamed.name = "screen.new"
                renamed.parameters["renamed"] = true
                return [renamed]
            },
            ClosureFilter("to-point", pattern: "screen.point") { event in [FilteredEvent(name: event.name)] },
            ClosureFilter("fan-out", pattern: "fan.*") { event in
                let count = event.name == "fan.ok" ? 64 : 65
                return (0..<count).map { FilteredEvent(name: "fan.part", parameters: ["n": $0]) }
            },
        ])
        let (span, started) = await logger.startEvent(name: "screen.old")
        #expect(started.recordedID == span.id)
        #expect(await span.end(parameters: ["ok": true]).isRecorded)
        let (_, point) = await logger.startEvent(name: "screen.point")
        #expect(point == .failed(.filterFailed(filter: "to-point", reason: "a span start cannot be replaced by a point event")))
        #expect(await logger.logEvent(name: "fan.ok").isRecorded)
        #expect(await logger.logEvent(name: "fan.many") == .failed(.filterFailed(filter: "fan-out", reason: "returned 65 events for one, more than 64")))
        await logger.close()

        let spans = try DatabaseReader(directory.databaseURL).rows("SELECT name, uuid, parameters, end_ms FROM span_events")
        #expect(spans.count == 1)
        #expect(spans.first?["name"] as? String == "screen.new" && spans.first?["end_ms"] as? Int64 != nil)
        #expect(spans.first?["uuid"] as? [UInt8] == span.id.bytes)
        #expect(try jsonObject(try #require(spans.first)["parameters"])["renamed"] as? Bool == true)
        #expect(try points(directory.databaseURL).filter { $0.name == "fan.part" }.count == 64)
    }

    @Test("A name or type a filter returns is checked like the app's own")
    func renameIsValidated() async throws {
        let directory = TemporaryDirectory()
        let logger = try logger(directory, [
            ClosureFilter("bad-name", pattern: "rename.name") { event in
                var renamed = event
                renamed.name = "bad..name"
                return [renamed]
            },
            ClosureFilter("bad-type", pattern: "rename.type") { event in
                var retyped = event
                retyped.type = "no spaces"
                return [retyped]
            },
            ClosureFilter("good", pattern: "rename.ok") { event in
                var renamed = event
                renamed.name = "renamed.ok"
                return [renamed]
            },
        ])
        let name = await logger.logEvent(name: "rename.name")
        guard case .failed(.invalidName("bad..name", _)) = name else {
            Issue.record("expected invalidName, got \(name)")
            return
        }
        let type = await logger.logEvent(name: "rename.type")
        guard case .failed(.invalidType("no spaces", _)) = type else {
            Issue.record("expected invalidType, got \(type)")
            return
        }
        #expect(await logger.logEvent(name: "rename.ok").isRecorded)
        await logger.close()
        #expect(try points(directory.databaseURL).map(\.name) == ["renamed.ok"])
    }

    @Test("Filters apply in configuration order, each matching its pattern against the names the previous ones returned")
    func order() async throws {
        let directory = TemporaryDirectory()
        func append(_ tag: String, pattern: String = "**") -> ClosureFilter {
            ClosureFilter("append-" + tag, pattern: pattern) { event in
                var event = event
                event.parameters["trail"] = ((event.parameters["trail"] as? String) ?? "") + tag
                return [event]
            }
        }
        let logger = try logger(directory, [
            append("a"),
            ClosureFilter("rename", pattern: "ui.old") { event in
                var renamed = event
                renamed.name = "ui.new"
                return [renamed]
            },
            append("b", pattern: "ui.new"),
            append("x", pattern: "ui.old"),
            append("c"),
        ])
        #expect(await logger.logEvent(name: "ui.old").isRecorded)
        await logger.close()
        let stored = try points(directory.databaseURL)
        #expect(stored.map(\.name) == ["ui.new"])
        #expect(stored.first?.parameters["trail"] as? String == "abc")
    }

    @Test("Pattern routing: a filter for ui.* leaves net.x alone")
    func routing() async throws {
        let directory = TemporaryDirectory()
        let calls = Mutex<[String]>([])
        let logger = try logger(directory, [
            ClosureFilter("ui-only", pattern: "ui.*") { event in
                calls.withLock { $0.append(event.name) }
                var event = event
                event.parameters["seen"] = true
                return [event]
            },
        ])
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        #expect(await logger.logEvent(name: "net.x").isRecorded)
        #expect(await logger.logEvent(name: "ui.tap.deep").isRecorded)
        await logger.close()
        #expect(calls.withLock { $0 } == ["ui.tap"])
        let stored = try points(directory.databaseURL)
        #expect(stored.map { $0.parameters["seen"] as? Bool } == [true, nil, nil])
    }

    @Test("Filters run on the logger's queue, never on the caller's thread")
    func notOnTheCallersThread() async throws {
        let directory = TemporaryDirectory()
        let callerKey = DispatchSpecificKey<Int>()
        let callerQueue = DispatchQueue(label: "filter-tests.caller")
        callerQueue.setSpecific(key: callerKey, value: 1)
        let returned = DispatchSemaphore(value: 0)
        let seen = Mutex<(onCaller: Bool, callReturnedFirst: Bool)?>(nil)
        let logger = try logger(directory, [
            ClosureFilter("where") { event in
                // On the caller's thread, the call could not have returned yet: this would wait
                // until the hang bound and fail.
                let callReturnedFirst = returned.wait(timeout: .now() + hangLimitSeconds) == .success
                seen.withLock { $0 = (DispatchQueue.getSpecific(key: callerKey) != nil, callReturnedFirst) }
                return [event]
            },
        ])
        let log = StatusLog()
        callerQueue.sync {
            logger.logEvent(name: "ui.tap", completion: log.completion)
            returned.signal()
        }
        await log.wait(for: 1)
        #expect(log.statuses.first?.isRecorded == true)
        let observed = try #require(seen.withLock { $0 })
        #expect(!observed.onCaller)
        #expect(observed.callReturnedFirst)
        await logger.close()
    }

    @Test("The aggregator folds what the filters returned")
    func aggregationSeesFilteredNames() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.policyOptions.fallback = try Policy.parse(Data(#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"perf.frame","window_s":60}]}}"#.utf8))
        configuration.filters = [ClosureFilter("rename-raw", pattern: "perf.raw") { event in
            var renamed = event
            renamed.name = "perf.frame"
            return [renamed]
        }]
        let logger = try NFLogger(configuration: configuration, clock: ManualClock())
        let status = await logger.logEvent(name: "perf.raw", parameters: ["ms": 16.5])
        #expect(status.isAggregated, "\(status)")
        await logger.close()
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM point_events") == 0)
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM aggregate_events WHERE name = 'perf.frame'") == 1)
    }

    @Test("Configuration: filter names 1–64 bytes and unique, patterns valid")
    func validation() throws {
        let directory = TemporaryDirectory()
        func check(_ filters: [any EventFilter]) -> ConfigurationError? {
            var configuration = directory.configuration()
            configuration.filters = filters
            do { try configuration.validate() } catch { return error }
            return nil
        }
        #expect(check([CommonParametersFilter(parameters: ["a": 1]), ParameterRedactor(keys: ["email"])]) == nil)
        guard case .invalidField("filters", _)? = check([ClosureFilter("", { [$0] })]) else {
            Issue.record("an empty name is refused")
            return
        }
        guard case .invalidField("filters", _)? = check([ClosureFilter(String(repeating: "n", count: 65), { [$0] })]) else {
            Issue.record("a 65-byte name is refused")
            return
        }
        #expect(check([ClosureFilter(String(repeating: "n", count: 64), { [$0] })]) == nil)
        #expect(check([ParameterRedactor(keys: ["a"]), ParameterRedactor(keys: ["b"])])
                == .invalidField("filters.redactor", reason: "is configured twice: filter names must be unique"))
        guard case .invalidField("filters.bad.pattern", let reason)? = check([ClosureFilter("bad", pattern: "a..b", { [$0] })]) else {
            Issue.record("an invalid pattern is refused")
            return
        }
        #expect(reason.hasPrefix("is not a valid pattern"))
        #expect(throws: ConfigurationError.self) {
            var configuration = directory.configuration()
            configuration.filters = [ClosureFilter("bad", pattern: "{a", { [$0] })]
            _ = try NFLogger(configuration: configuration)
        }
    }
}
