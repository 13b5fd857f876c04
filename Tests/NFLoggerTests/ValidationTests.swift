import Foundation
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("Validation of names and parameters")
struct ValidationTests {
    @Test("Invalid names fail with the reason, and nothing is stored", arguments: [
        ("", "it is empty"),
        ("ui..tap", "it has an empty part (a leading, trailing or doubled '.')"),
        (".ui", "it has an empty part (a leading, trailing or doubled '.')"),
        ("ui.", "it has an empty part (a leading, trailing or doubled '.')"),
        ("ui tap", "only ASCII letters, digits, '_', '-' and '.' between parts are allowed"),
        ("ui.tåp", "only ASCII letters, digits, '_', '-' and '.' between parts are allowed"),
        (String(repeating: "a", count: 257), "it is 257 bytes long; the limit is 256"),
    ])
    func invalidNames(name: String, reason: String) async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        #expect(await logger.logEvent(name: name) == .failed(.invalidName(name, reason: reason)))
        let (span, status) = await logger.startEvent(name: name)
        #expect(status == .failed(.invalidName(name, reason: reason)))
        #expect(await span.end() == .failed(.unknownSpan(span.id)))
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.storedSpanEvents == 0)
        #expect(diagnostics.failed == 3)
    }

    @Test("Names at the limits are accepted")
    func validNames() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        for name in ["a", "ui.tap", "Form-Signup.step_2", String(repeating: "a", count: 256), "1.2.3"] {
            #expect(await logger.logEvent(name: name).isRecorded, "\(name)")
        }
    }

    @Test("An invalid type fails")
    func invalidType() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let status = await logger.logEvent(name: "ui.tap", type: "user action")
        #expect(status == .failed(.invalidType("user action", reason: "only ASCII letters, digits, '_', '-' and '.' between parts are allowed")))
        #expect(await logger.logEvent(name: "ui.tap", type: String(repeating: "t", count: 65)).failure != nil)
    }

    /// Parameters that compile but must be refused when encoded, each with the key path the error must name.
    enum BadParameters: CaseIterable, Sendable {
        case nan, infinity, floatInfinity, nestedNaN, emptyKey, nestedLongKey

        var parameters: LogParameters {
            switch self {
            case .nan: ["ratio": Double.nan]
            case .infinity: ["ratio": Double.infinity]
            case .floatInfinity: ["f": Float.infinity]
            case .nestedNaN: ["tags": ["ok", 1, ["deep": .double(.nan)]] as LogValue]
            case .emptyKey: ["": 1]
            case .nestedLongKey: ["user": [String(repeating: "k", count: 257): 1]]
            }
        }

        var key: String {
            switch self {
            case .nan, .infinity: "ratio"
            case .floatInfinity: "f"
            case .nestedNaN: "tags[2].deep"
            case .emptyKey: ""
            case .nestedLongKey: "user." + String(repeating: "k", count: 257)
            }
        }
    }

    @Test("Parameters that cannot be JSON fail with the offending key's path, and nothing is stored", arguments: BadParameters.allCases)
    func invalidParameters(bad: BadParameters) async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let status = await logger.logEvent(name: "ui.tap", parameters: bad.parameters)
        guard case .failed(.invalidParameter(let reportedKey, let reason)) = status else {
            Issue.record("expected invalidParameter, got \(status)")
            return
        }
        #expect(reportedKey == bad.key)
        #expect(!reason.isEmpty)
        // A span's end with bad parameters fails alone; the span stays open for a good end.
        let (span, started) = await logger.startEvent(name: "ui.screen", parameters: ["ok": 1])
        #expect(started.isRecorded)
        #expect(await span.end(parameters: bad.parameters).failure != nil)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == 0 && diagnostics.openSpans == 1)
    }

    @Test("Types JSON cannot carry do not conform, so they do not compile as parameters")
    func nonJSONTypesDoNotConform() {
        // What the compiler checks at a call site is the conformance; its absence is what makes
        // `["when": Date()]` a compile error rather than a run-time failure.
        func conforms(_ type: Any.Type) -> Bool { type is any LogValueConvertible.Type }
        #expect(!conforms(Date.self) && !conforms(URL.self) && !conforms(Data.self) && !conforms(NSObject.self))
        #expect(!conforms(UInt64.self) && !conforms(UInt.self), "may not fit in Int64")
        #expect(!conforms([Int: String].self) && !conforms([Date].self) && !conforms(Date?.self))
        #expect(conforms(String.self) && conforms(Int.self) && conforms(Double.self) && conforms(Bool.self))
        #expect(conforms([String].self) && conforms([String: [Int?]].self) && conforms(LogValue.self) && conforms(UInt32.self))
    }

    /// `[String: Any]` values that `LogParameters(jsonObject:)` refuses, with the key path it must name.
    @Test("Untyped dictionaries convert through LogParameters(jsonObject:), which names the offending key", arguments: [
        (["when": Date(timeIntervalSince1970: 0)] as [String: any Sendable], "when"),
        (["user": ["address": ["zip": URL(fileURLWithPath: "/")]]], "user.address.zip"),
        (["tags": ["ok", 1, ["deep": Data()]] as [any Sendable]], "tags[2].deep"),
        (["big": UInt64.max], "big"),
        (["ids": [1: "one"]], "ids"),
    ])
    func jsonObjectConversion(source: [String: any Sendable], key: String) throws {
        do {
            _ = try LogParameters(jsonObject: source)
            Issue.record("expected a refusal for \(key)")
        } catch {
            guard case .invalidParameter(let reportedKey, let reason) = error else {
                Issue.record("expected invalidParameter, got \(error)")
                return
            }
            #expect(reportedKey == key)
            #expect(!reason.isEmpty)
        }
    }

    @Test("A large drain is encoded on every core: the bad parameters among 4,000 calls fail alone, the rest are recorded, in order")
    func largeDrainEncodedInParallel() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let calls = 4_000
        let statuses = Lock<[Int: LogStatus]>([:])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Lock(calls)
            for index in 0..<calls {
                // Logged without waiting, so drains take hundreds at once (past the parallel threshold).
                let ratio = index % 100 == 7 ? Double.nan : Double(index)
                logger.logEvent(name: "bulk.event", parameters: ["index": index, "ratio": ratio, "tag": "t\(index)"]) { status in
                    statuses.withLock { $0[index] = status }
                    if remaining.withLock({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }
            }
        }
        let all = statuses.withLock { $0 }
        let failed = all.filter { $0.value.failure != nil }
        #expect(Set(failed.keys) == Set((0..<calls).filter { $0 % 100 == 7 }))
        #expect(failed.values.allSatisfy { $0 == .failed(.invalidParameter(key: "ratio", reason: "nan is not a finite number; JSON has no NaN or infinity")) })
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == calls - calls / 100 && diagnostics.recorded == calls - calls / 100)
    }

    @Test("Nesting deeper than 32 levels is refused")
    func tooDeep() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        var value: LogValue = 1
        for _ in 0..<40 { value = ["n": value] }
        let status = await logger.logEvent(name: "deep.event", parameters: ["root": value])
        guard case .failed(.invalidParameter(let key, let reason)) = status else {
            Issue.record("expected invalidParameter, got \(status)")
            return
        }
        #expect(key.hasPrefix("root.n.n"))
        #expect(reason.contains("32"))
    }

    @Test("Parameters over the encoded-size limit fail; at the limit they pass")
    func sizeLimit() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxParametersBytes = 100
        let logger = try NFLogger(configuration: configuration)
        // {"s":"…"} is 8 bytes of syntax around the string.
        #expect(await logger.logEvent(name: "a.b", parameters: ["s": String(repeating: "x", count: 92)]).isRecorded)
        let status = await logger.logEvent(name: "a.b", parameters: ["s": String(repeating: "x", count: 93)])
        guard case .failed(.parametersTooLarge(let bytes, let limit)) = status else {
            Issue.record("expected parametersTooLarge, got \(status)")
            return
        }
        #expect(bytes > 100 && limit == 100)
        #expect(await logger.diagnostics().storedPointEvents == 1)
    }

    @Test("The default parameter limit is 32 KiB")
    func defaultLimit() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        #expect(await logger.logEvent(name: "a.b", parameters: ["s": String(repeating: "x", count: 32 * 1024 - 8)]).isRecorded)
        #expect(await logger.logEvent(name: "a.b", parameters: ["s": String(repeating: "x", count: 32 * 1024)]).failure != nil)
    }

    @Test("A closed logger refuses new calls with .closed")
    func closed() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        await logger.close()
        #expect(await logger.logEvent(name: "a.b") == .failed(.closed))
    }
}

@Suite("Parameter encoding")
struct ParameterEncoderTests {
    let encoder = ParameterEncoder(maxBytes: 32 * 1024)

    func roundTrip(_ parameters: LogParameters) throws -> [String: Any] {
        let bytes = try #require(try encoder.encode(parameters))
        return try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("Strings with quotes, backslashes, control characters and non-ASCII survive the round trip")
    func strings() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} é 漢字 🙂"
        let decoded = try roundTrip(["s": tricky, "k\"ey\n": "v"])
        #expect(decoded["s"] as? String == tricky)
        #expect(decoded["k\"ey\n"] as? String == "v")
    }

    @Test("Numbers keep their values: integers of every width, doubles, floats")
    func numbers() throws {
        let decoded = try roundTrip(["i": Int.min, "u8": UInt8(255), "i32": Int32(-7), "u64": UInt32.max, "i64": Int64.max,
                                     "d": 0.1, "tiny": Double.leastNonzeroMagnitude, "huge": 1.7976931348623157e308, "f": Float(0.5), "neg": -0.0])
        #expect(decoded["i"] as? Int == Int.min)
        #expect(decoded["u8"] as? Int == 255)
        #expect(decoded["i32"] as? Int == -7)
        #expect(decoded["u64"] as? Int64 == Int64(UInt32.max))
        #expect(decoded["i64"] as? Int64 == Int64.max)
        #expect(decoded["d"] as? Double == 0.1)
        #expect(decoded["tiny"] as? Double == Double.leastNonzeroMagnitude)
        #expect(decoded["huge"] as? Double == 1.7976931348623157e308)
        #expect(decoded["f"] as? Double == 0.5)
    }

    @Test("nil, NSNull, optionals, empty containers")
    func nullsAndEmpties() throws {
        let some: Int? = 4
        let none: String? = nil
        let decoded = try roundTrip(["a": LogValue.null, "b": some, "c": none, "d": [Int](), "e": [String: Int]()])
        #expect(decoded["a"] is NSNull && decoded["c"] is NSNull)
        #expect(decoded["b"] as? Int == 4)
        #expect((decoded["d"] as? [Any])?.isEmpty == true)
        #expect((decoded["e"] as? [String: Any])?.isEmpty == true)
    }

    @Test("Values decoded by JSONSerialization (NSNumber booleans and numbers) are accepted as what they are")
    func foundationValues() throws {
        let source = #"{"flag":true,"off":false,"count":3,"ratio":0.25,"list":[1,"a",null],"nested":{"n":-7}}"#
        let parsed = try #require(JSONSerialization.jsonObject(with: Data(source.utf8)) as? [String: Any])
        let decoded = try roundTrip(try LogParameters(jsonObject: parsed))
        #expect(decoded["flag"] as? Bool == true && decoded["off"] as? Bool == false)
        #expect(decoded["count"] as? Int == 3 && decoded["ratio"] as? Double == 0.25)
        #expect((decoded["nested"] as? [String: Any])?["n"] as? Int == -7)
        let text = String(decoding: try #require(try encoder.encode(try LogParameters(jsonObject: ["flag": parsed["flag"] as Any, "count": parsed["count"] as Any]))), as: UTF8.self)
        #expect(text.contains(#""flag":true"#) && text.contains(#""count":3"#))
    }

    @Test("No parameters store nothing")
    func empty() throws {
        #expect(try encoder.encode([:]) == nil)
    }
}

@Suite("Measurements")
struct MeasurementTests {
    @Test("record(name:value:dimensions:) stores a point event of type measurement with the value and the dimensions")
    func recorded() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let status = await logger.record(name: "perf.frame", value: 16.7, dimensions: ["screen": "home"])
        let id = try #require(status.recordedID)
        #expect(await logger.record(name: "perf.frame", value: .nan) == .failed(.invalidParameter(key: "value", reason: "nan is not a finite number; JSON has no NaN or infinity")))
        #expect(await logger.record(name: "perf.frame", value: 1, dimensions: ["value": "x"]).failure != nil)
        #expect(await logger.record(name: "perf frame", value: 1).failure != nil)
        await logger.close()
        let reader = try DatabaseReader(directory.databaseURL)
        let row = try #require(try reader.rows("SELECT * FROM point_events").first)
        #expect(row["uuid"] as? [UInt8] == id.bytes)
        #expect(row["type"] as? String == "measurement")
        let parameters = try jsonObject(row["parameters"])
        #expect(parameters["value"] as? Double == 16.7 && parameters["screen"] as? String == "home")
        #expect(try reader.int("SELECT count(*) FROM point_events") == 1)
    }
}
