import Dispatch
import Foundation
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing
@testable import NFLogger
import NFLogTestSupport

// Parameters encoded on the writer queue: each failure alone with its key path, the byte bound, the JSON object path's agreement with the encoder.

@Suite("Parameters encoded on the queue")
struct QueueEncodedParameterTests {
    @Test("In one drain, each request whose parameters fail fails alone with its key path; the rest are recorded; completions run in call order")
    func failuresInOneDrain() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxParametersBytes = 100
        configuration.limits.busyTimeout = 10
        let logger = try NFLogger(configuration: configuration)
        #expect(await logger.logEvent(name: "warm.up").isRecorded)  // the schema exists

        let lock = try HeldWriteLock(directory.databaseURL)
        let arrivals = OrderedArrivals()
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

        let lock = try HeldWriteLock(directory.databaseURL)
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
