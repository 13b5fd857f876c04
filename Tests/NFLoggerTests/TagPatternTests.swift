import Testing
@testable import NFLogger
@_spi(NFLogShared) import NFLogSupport

@Suite("Tag patterns (fluentd semantics)")
struct TagPatternTests {
    @Test("Matching", arguments: [
        ("a.b", "a.b", true), ("a.b", "a.c", false), ("a.b", "a.b.c", false), ("a.b", "a", false),
        ("a.*", "a.b", true), ("a.*", "a", false), ("a.*", "a.b.c", false),
        ("a.**", "a", true), ("a.**", "a.b", true), ("a.**", "a.b.c", true), ("a.**", "ab", false), ("a.**", "b.a", false),
        ("**", "a", true), ("**", "a.b.c", true),
        ("**.c", "c", true), ("**.c", "a.b.c", true), ("**.c", "a.b", false),
        ("a.*.c", "a.b.c", true), ("a.*.c", "a.c", false), ("a.*.c", "a.b.b.c", false),
        ("a.**.c", "a.c", true), ("a.**.c", "a.b.c", true), ("a.**.c", "a.b.d.c", true), ("a.**.c", "a.b.d", false),
        ("{a,b}.c", "a.c", true), ("{a,b}.c", "b.c", true), ("{a,b}.c", "c.c", false),
        ("app.{launch,stop}", "app.stop", true), ("app.{launch,stop}", "app.pause", false),
        ("{ui.*,net.**}", "ui.tap", true), ("{ui.*,net.**}", "net.a.b", true), ("{ui.*,net.**}", "ui.a.b", false),
        ("{a,{b,c}}.x", "c.x", true), ("{a,{b,c}}.x", "d.x", false),
        ("ui.tap_*", "ui.tap_ok", true), ("ui.tap_*", "ui.tap_", true), ("ui.tap_*", "ui.tip_ok", false),
        ("*.*", "a.b", true), ("*.*", "a", false),
        ("a.**.**.b", "a.b", true), ("a.**.**.b", "a.x.y.b", true),
        ("x-1.y_2", "x-1.y_2", true),
        // Every `**` is "zero or more parts", also when repeated or inside braces (fluentd's
        // regex translation needs one more part in these corners; we follow the rule as stated).
        ("a.**.**", "a", true), ("a.{b,**}", "a", true), ("a.{b,**}", "a.c.d", true), ("b.{**.a,b}", "b.a", true),
    ])
    func matching(pattern: String, name: String, expected: Bool) throws {
        #expect(try TagPattern(pattern).matches(name) == expected, "\(pattern) vs \(name)")
    }

    @Test("Invalid patterns are rejected at construction", arguments: [
        ("", "the pattern is empty"),
        ("a..b", "part 2 of \"a..b\" is empty"),
        (".a", "part 1 of \".a\" is empty"),
        ("a.", "part 2 of \"a.\" is empty"),
        ("a.b**", "'**' must be a whole part, as in a.**.b"),
        ("a.***", "'**' must be a whole part, as in a.**.b"),
        ("a.{b,c", "'{' without a matching '}'"),
        ("a.b}", "'}' without a matching '{'"),
        ("a,b", "',' outside braces"),
        ("a b", "character ' ' is not allowed (letters, digits, _, -, *, ., {, }, , only)"),
        ("{a,}.b", "part 1 of \".b\" is empty"),
    ])
    func rejection(pattern: String, reason: String) {
        #expect(throws: PatternError(pattern: pattern, reason: reason)) { try TagPattern(pattern) }
    }

    @Test("Brace explosions are bounded")
    func braceLimit() {
        let pattern = String(repeating: "{a,b,c,d}.", count: 5) + "x"  // 4^5 = 1024 alternatives
        #expect(throws: PatternError.self) { try TagPattern(pattern) }
    }

    @Test("Many `**` parts against a long name stay fast (no exponential backtracking)")
    func adversarial() throws {
        let pattern = try TagPattern(Array(repeating: "**", count: 1).joined() + "." + Array(repeating: "a.**", count: 60).joined(separator: ".") + ".b")
        let name = Array(repeating: "a", count: 120).joined(separator: ".")
        #expect(pattern.matches(name) == false)
    }

    @Test("EventRules reject the first bad pattern")
    func rules() {
        #expect(throws: TagPatternError(pattern: "x..y", reason: "part 2 of \"x..y\" is empty")) {
            try EventRules(allow: ["ok.*", "x..y"])
        }
    }
}
