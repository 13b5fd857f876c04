import Foundation
import Testing
@testable import NFLogger

@Suite("Validation on the caller's thread")
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

    /// Parameters that must be refused, each with the key path the error must name.
    enum BadParameters: CaseIterable, Sendable {
        case date, nan, infinity, floatInfinity, nestedURL, dataInArray, hugeUnsigned, integerKeys, emptyKey

        var parameters: [String: Any] {
            switch self {
            case .date: ["when": Date(timeIntervalSince1970: 0)]
            case .nan: ["ratio": Double.nan]
            case .infinity: ["ratio": Double.infinity]
            case .floatInfinity: ["f": Float.infinity]
            case .nestedURL: ["user": ["address": ["zip": URL(fileURLWithPath: "/")]]]
            case .dataInArray: ["tags": ["ok", 1, ["deep": Data()]]]
            case .hugeUnsigned: ["big": UInt64.max]
            case .integerKeys: ["ids": [1: "one"]]
            case .emptyKey: ["": 1]
            }
        }

        var key: String {
            switch self {
            case .date: "when"
            case .nan, .infinity: "ratio"
            case .floatInfinity: "f"
            case .nestedURL: "user.address.zip"
            case .dataInArray: "tags[2].deep"
            case .hugeUnsigned: "big"
            case .integerKeys: "ids"
            case .emptyKey: ""
            }
        }
    }

    @Test("Non-JSON parameters fail with the offending key's path, and nothing is stored", arguments: BadParameters.allCases)
    func invalidParameters(bad: BadParameters) async throws {
        let parameters = bad.parameters
        let key = bad.key
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let status = await logger.logEvent(name: "ui.tap", parameters: parameters)
        guard case .failed(.invalidParameter(let reportedKey, let reason)) = status else {
            Issue.record("expected invalidParameter, got \(status)")
            return
        }
        #expect(reportedKey == key)
        #expect(!reason.isEmpty)
        #expect(await logger.diagnostics().storedPointEvents == 0)
    }

    @Test("Nesting deeper than 32 levels is refused")
    func tooDeep() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        var value: Any = 1
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

    func roundTrip(_ parameters: [String: Any]) throws -> [String: Any] {
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
        let decoded = try roundTrip(["i": Int.min, "u8": UInt8(255), "i32": Int32(-7), "u64": UInt64(Int64.max),
                                     "d": 0.1, "tiny": Double.leastNonzeroMagnitude, "huge": 1.7976931348623157e308, "f": Float(0.5), "neg": -0.0])
        #expect(decoded["i"] as? Int == Int.min)
        #expect(decoded["u8"] as? Int == 255)
        #expect(decoded["i32"] as? Int == -7)
        #expect(decoded["u64"] as? Int64 == Int64.max)
        #expect(decoded["d"] as? Double == 0.1)
        #expect(decoded["tiny"] as? Double == Double.leastNonzeroMagnitude)
        #expect(decoded["huge"] as? Double == 1.7976931348623157e308)
        #expect(decoded["f"] as? Double == 0.5)
    }

    @Test("nil, NSNull, optionals, empty containers")
    func nullsAndEmpties() throws {
        let some: Int? = 4
        let none: String? = nil
        let decoded = try roundTrip(["a": NSNull(), "b": some as Any, "c": none as Any, "d": [Any](), "e": [String: Any]()])
        #expect(decoded["a"] is NSNull && decoded["c"] is NSNull)
        #expect(decoded["b"] as? Int == 4)
        #expect((decoded["d"] as? [Any])?.isEmpty == true)
        #expect((decoded["e"] as? [String: Any])?.isEmpty == true)
    }

    @Test("Values decoded by JSONSerialization (NSNumber booleans and numbers) are accepted as what they are")
    func foundationValues() throws {
        let source = #"{"flag":true,"off":false,"count":3,"ratio":0.25,"list":[1,"a",null],"nested":{"n":-7}}"#
        let parsed = try #require(JSONSerialization.jsonObject(with: Data(source.utf8)) as? [String: Any])
        let decoded = try roundTrip(parsed)
        #expect(decoded["flag"] as? Bool == true && decoded["off"] as? Bool == false)
        #expect(decoded["count"] as? Int == 3 && decoded["ratio"] as? Double == 0.25)
        #expect((decoded["nested"] as? [String: Any])?["n"] as? Int == -7)
        let text = String(decoding: try #require(try encoder.encode(["flag": parsed["flag"] as Any, "count": parsed["count"] as Any])), as: UTF8.self)
        #expect(text.contains(#""flag":true"#) && text.contains(#""count":3"#))
    }

    @Test("No parameters store nothing")
    func empty() throws {
        #expect(try encoder.encode([:]) == nil)
    }
}
