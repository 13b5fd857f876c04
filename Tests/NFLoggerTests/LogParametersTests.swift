import Foundation
import Testing
@testable import NFLogger
import NFLogTestSupport

// LogParameters as an ordered literal: members stored in the order written, a key written twice
// keeps its last value in its first place, the Dictionary-like edits apps' filters use.

@Suite("LogParameters")
struct LogParametersTests {
    @Test("Stored parameters keep the literal's order, byte for byte")
    func storedInOrder() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let status = await logger.logEvent(name: "order.kept", parameters: ["zeta": 1, "alpha": "a", "mid": true, "b": [1, 2]])
        #expect(status.isRecorded)
        await logger.close()
        let row = try #require(try DatabaseReader(directory.databaseURL).rows("SELECT parameters FROM point_events").first)
        #expect(row["parameters"] as? String == #"{"zeta":1,"alpha":"a","mid":true,"b":[1,2]}"#)
    }

    @Test("A key written twice in a literal keeps its last value, in its first place; the call is recorded, not a crash")
    func duplicateKeys() async throws {
        let small: LogParameters = ["k": 1, "other": 2, "k": 3]
        #expect(small.map(\.key) == ["k", "other"] && small["k"] as? Int == 3)
        // Past 16 members the duplicates are found through a set, with the same result.
        var pairs: [LogParameters.Member] = (0..<20).map { ("key\($0)", $0) }
        pairs.append(("key3", "last"))
        let large = LogParameters(written: pairs)
        #expect(large.count == 20 && large["key3"] as? String == "last" && large[3].key == "key3")

        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        #expect(await logger.logEvent(name: "dup.keys", parameters: ["a": 1, "b": 2, "a": "again"]).isRecorded)
        await logger.close()
        let row = try #require(try DatabaseReader(directory.databaseURL).rows("SELECT parameters FROM point_events").first)
        #expect(row["parameters"] as? String == #"{"a":"again","b":2}"#)
    }

    // Quadratic work here was a page's way to hold the app's main thread (the web bridge converts
    // its message there): 100,000 keys take well under a second when linear, and many minutes
    // when each key walks the ones before it.
    @Test("Many keys convert, merge and de-duplicate in linear time", .timeLimit(.minutes(1)))
    func manyKeysLinear() throws {
        let count = 100_000
        var object: [String: Any] = [:]
        for index in 0..<count { object["k\(index)"] = index }
        let converted = try LogParameters(jsonObject: object)
        #expect(converted.count == count && converted["k77"] as? LogValue == .integer(77))

        var merged = converted
        let other = LogParameters(Dictionary(uniqueKeysWithValues: (count / 2..<count + count / 2).map { ("k\($0)", $0 as any LogValueConvertible) }))
        merged.merge(other) { _, new in new }
        #expect(merged.count == count + count / 2 && merged["k\(count - 1)"] as? Int == count - 1)

        let doubled = (0..<2 * count).map { index -> LogParameters.Member in ("k\(index % count)", index) }
        let deduplicated = LogParameters(written: doubled)
        #expect(deduplicated.count == count && deduplicated["k5"] as? Int == count + 5 && deduplicated[5].key == "k5")
    }

    @Test("Setting, removing and merging work as a dictionary's do; a new key goes last")
    func edits() {
        var parameters: LogParameters = ["a": 1, "b": 2]
        parameters["c"] = 3
        parameters["a"] = "one"
        parameters["b"] = nil
        parameters["absent"] = nil
        #expect(parameters.map(\.key) == ["a", "c"] && parameters["a"] as? String == "one" && parameters["b"] == nil)
        #expect(parameters.removeValue(forKey: "c") as? Int == 3 && parameters.removeValue(forKey: "c") == nil)
        parameters.merge(["a": "common", "d": 4]) { own, _ in own }
        #expect(parameters.map(\.key) == ["a", "d"] && parameters["a"] as? String == "one")
        let overwritten = parameters.merging(["a": "common"]) { _, common in common }
        #expect(overwritten["a"] as? String == "common" && parameters["a"] as? String == "one")
        let fromDictionary = LogParameters(["x": 1] as [String: any LogValueConvertible])
        #expect(fromDictionary.count == 1 && fromDictionary["x"] as? Int == 1 && LogParameters().isEmpty)
    }
}

