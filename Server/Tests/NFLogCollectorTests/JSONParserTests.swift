import Testing
@testable import NFLogCollector
@_spi(NFLogShared) @testable import NFLogSupport

@Suite("The strict JSON parser")
struct JSONParserTests {
    func parse(_ text: String, limits: JSONParser.Limits = .init()) throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8), limits: limits)
    }

    @Test("Valid documents parse to the right values")
    func valid() throws {
        let value = try parse(#" {"a": [1, -2.5e3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"], "b": {}, "c": 9007199254740993} "#)
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        guard case .array(let a)? = object["a"] else { Issue.record("a is not an array"); return }
        #expect(a[0] == .number(JSONNumber(integer: 1, double: 1)))
        #expect(a[1] == .number(JSONNumber(integer: nil, double: -2500)))
        #expect(a[2] == .bool(true) && a[3] == .bool(false) && a[4] == .null)
        #expect(a[5] == .string("x\"\\/\u{08}\u{0C}\n\r\té😀"))
        guard case .number(let big)? = object["c"] else { Issue.record("c is not a number"); return }
        #expect(big.integer == 9007199254740993)  // exact, beyond Double's integers
    }

    @Test("An object remembers its bytes, so parameters can be stored verbatim")
    func rawRange() throws {
        let text = #"{"p":{"k": [1, 2]},"q":1}"#
        guard case .object(let root) = try parse(text), case .object(let inner)? = root["p"] else {
            Issue.record("unexpected shape"); return
        }
        #expect(String(decoding: Array(text.utf8)[inner.range], as: UTF8.self) == #"{"k": [1, 2]}"#)
    }

    @Test("Invalid documents are refused with the reason", arguments: [
        ("", "unexpected end of input"),
        ("{", "expected a string key"),
        (#"{"a":1,}"#, "expected a string key"),
        (#"{"a":1 "b":2}"#, "expected ',' or '}' in an object"),
        ("[1,]", "unexpected character ']'"),
        ("[1 2]", "expected ',' or ']' in an array"),
        ("01", "unexpected data after the JSON value"),
        ("1.", "a number needs digits after '.'"),
        ("-", "a number ends too early"),
        ("1e", "a number needs digits in its exponent"),
        ("1e999", "a number is out of range"),
        ("tru", "invalid literal (expected true)"),
        (#""abc"#, "unexpected end of input inside a string"),
        ("\"a\u{01}b\"", "a control character must be escaped inside a string"),
        (#""\x""#, "an invalid escape \\'x'"),
        (#""\ud800""#, "an unpaired surrogate escape"),
        (#""\udc00""#, "an unpaired surrogate escape"),
        (#""\u12g4""#, "an invalid hex digit in a unicode escape"),
        (#"{"a":1,"a":2}"#, "duplicate key \"a\""),
        ("{} {}", "unexpected data after the JSON value"),
        ("NaN", "unexpected character 'N'"),
    ])
    func invalid(text: String, reason: String) {
        #expect {
            try parse(text)
        } throws: { error in
            (error as? JSONParseError)?.reason == reason
        }
    }

    @Test("Invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        let bytes: [UInt8] = Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
    }

    @Test("Deep nesting is refused at the limit, not by exhausting the stack")
    func depth() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect {
            try parse(deep)
        } throws: { error in
            (error as? JSONParseError)?.reason == "nested deeper than 64 levels"
        }
        var limits = JSONParser.Limits()
        limits.maxDepth = 3
        #expect(throws: JSONParseError.self) { try parse("[[[[1]]]]", limits: limits) }
        #expect((try? parse("[[[1]]]", limits: limits)) != nil)
    }

    @Test("The value budget stops a document of many small values")
    func valueBudget() {
        var limits = JSONParser.Limits()
        limits.maxValues = 5
        #expect((try? parse("[1,2,3,4]", limits: limits)) != nil)
        #expect {
            try parse("[1,2,3,4,5]", limits: limits)
        } throws: { error in
            (error as? JSONParseError)?.reason == "more than 5 values"
        }
    }

    @Test("An error says where it happened")
    func errorPath() {
        #expect {
            try parse(#"{"events":[{"a":1},{"b":[1,tru]}]}"#)
        } throws: { error in
            (error as? JSONParseError)?.path == "events[1].b[1]"
        }
    }

    @Test("Long strings are refused past the limit, escaped or not")
    func longStrings() {
        var limits = JSONParser.Limits()
        limits.maxStringBytes = 10
        #expect((try? parse(#""0123456789""#, limits: limits)) != nil)
        #expect(throws: JSONParseError.self) { try parse(#""01234567890""#, limits: limits) }
        #expect(throws: JSONParseError.self) { try parse(#""\n123456789012""#, limits: limits) }
    }

    @Test("Integers read without strtod agree with it and with Int64's own parsing, -0 and the 18/19-digit edge included")
    func integersAsStrtodReadsThem() throws {
        var texts = ["0", "-0", "7", "-7", "999999999999999999", "-999999999999999999", "1000000000000000000",
                     "9007199254740993", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "123456789012345678901"]
        var generator = SeededRandom(seed: 35)
        for _ in 0..<2_000 {
            let digits = Int.random(in: 1...20, using: &generator)
            var text = String(Int.random(in: 1...9, using: &generator))
            for _ in 1..<digits { text += String(Int.random(in: 0...9, using: &generator)) }
            texts.append(Bool.random(using: &generator) ? "-" + text : text)
        }
        for text in texts {
            guard case .number(let number) = try parse(text) else { Issue.record("\(text) is not a number"); continue }
            let expected = try #require(Double(text))
            #expect(number.double.bitPattern == expected.bitPattern, "\(text)")
            #expect(number.integer == Int64(text), "\(text)")
        }
    }
}
