import Foundation
@_spi(NFLogShared) @testable import NFLogSupport
import Testing
@testable import NFLogCollector

@Suite("Batch validation against the protocol")
struct BatchDecoderTests {
    func decode(_ text: String) throws(BatchError) -> Batch {
        try BatchDecoder().decode(Array(text.utf8))
    }

    @Test("A valid batch decodes, parameters verbatim")
    func valid() throws {
        let batch = try decode(BatchFixtures.batch(events: [BatchFixtures.point(), BatchFixtures.span()]))
        #expect(batch.events.count == 2)
        #expect(batch.context.appID == "com.example.shop" && batch.context.sessions.count == 1)
        #expect(batch.events[0].kind == .point && batch.events[0].parameters == #"{"button":"buy","n":1}"#)
        #expect(batch.events[1].kind == .span && batch.events[1].durationMilliseconds == 250.125)
        #expect(batch.events[1].endParameters == #"{"status":200}"#)
    }

    @Test("Unknown fields are ignored, for forward compatibility")
    func unknownFields() throws {
        let event = BatchFixtures.point().dropLast() + #","future_field":[1,2]}"#
        #expect(try decode(BatchFixtures.batch(events: [String(event)])).events.count == 1)
    }

    @Test("Every field the decoder knows is found by its own name, and by no other")
    func everyEventKey() {
        for key in EventKey.allCases {
            #expect(EventKey(key.name) == key, "\(key.name)")
            #expect(EventKey(key.name + "x") == nil && EventKey(String(key.name.dropLast()) + "#") == nil)
        }
    }

    @Test("An event's fields are found among many unknown ones, and a key of a field's length that is not it is ignored")
    func fieldsAmongUnknownOnes() throws {
        let unknown = (0..<40).map { #""x\#($0)":{"uuid":"not one","kind":[]}"# }.joined(separator: ",")
        let event = Self.with(BatchFixtures.point(), unknown + #","uuix":1,"kinds":2,"parameter":3,"transactio":4"#)
        let decoded = try decode(BatchFixtures.batch(events: [event])).events[0]
        #expect(decoded.kind == .point && decoded.name == "ui.tap" && decoded.parameters == #"{"button":"buy","n":1}"#)
        #expect(decoded.transaction == nil && decoded.parentSpan == nil && decoded.source == .native)
        // The same fields last, after the unknown ones, and a span's only fields refused on a point wherever they are.
        for field in [#""start":1"#, #""end":1"#, #""duration_ms":1"#, #""end_parameters":{}"#, #""abandoned":false"#] {
            let key = String(field.dropFirst().prefix { $0 != "\"" })
            #expect(throws: BatchError(path: "events[0].\(key)", reason: "only spans have \(key)")) {
                try decode(BatchFixtures.batch(events: [Self.with(BatchFixtures.point(), unknown + "," + field)]))
            }
        }
    }

    @Test("Too many events is over a limit (answered 413, so the sender splits), not a broken rule")
    func tooManyEvents() {
        var decoder = BatchDecoder()
        decoder.maxEvents = 2
        #expect(throws: BatchError(path: "events", reason: "holds 3 events; the limit is 2 per batch", isOverLimit: true)) {
            try decoder.decode(Array(BatchFixtures.batch(events: (0..<3).map { _ in BatchFixtures.point() }).utf8))
        }
    }

    @Test("A pruned count under a name no event could have is left out; the batch and the other counts stand")
    func invalidPrunedName() throws {
        let text = String(BatchFixtures.batch(events: [BatchFixtures.point()]).dropLast())
            + #","diagnostics":{"pruned":{"ui.tap":3,"not a name!":5,"":1}}}"#
        let batch = try decode(text)
        #expect(batch.events.count == 1)
        #expect(batch.diagnostics?.pruned.map(\.0) == ["ui.tap"] && batch.diagnostics?.pruned.map(\.1) == [3])
    }

    @Test("diagnostics.quarantined: a count of events the device set aside; negative or not an integer is refused")
    func quarantinedCount() throws {
        let head = String(BatchFixtures.batch(events: [BatchFixtures.point()]).dropLast())
        #expect(try decode(head + #","diagnostics":{"quarantined":3}}"#).diagnostics?.quarantined == 3)
        #expect(try decode(head + #","diagnostics":{"pruned":{}}}"#).diagnostics?.quarantined == 0)
        #expect(throws: BatchError(path: "diagnostics.quarantined", reason: "must not be negative")) {
            try decode(head + #","diagnostics":{"quarantined":-1}}"#)
        }
        #expect(throws: BatchError.self) { try decode(head + #","diagnostics":{"quarantined":"3"}}"#) }
    }

    @Test("An error path writes a key that is not a simple name as a JSON string in brackets")
    func pathSyntax() {
        let pruned = String(BatchFixtures.batch(events: [BatchFixtures.point()]).dropLast()) + #","diagnostics":{"pruned":{"ui.tap":-1}}}"#
        #expect(throws: BatchError(path: #"diagnostics.pruned["ui.tap"]"#, reason: "must not be negative")) { try decode(pruned) }
        do {
            _ = try decode(BatchFixtures.batch(events: [BatchFixtures.point(parameters: #"{"a.b":{"c\"d":tru}}"#)]))
            Issue.record("malformed JSON was accepted")
        } catch {
            #expect(error.path == #"events[0].parameters["a.b"]["c\"d"]"#)
        }
    }

    static let s = BatchFixtures.session
    @Test("Each violation is refused, naming the path", arguments: [
        (#"{"version":2}"#, "version: unsupported version 2; this collector reads version 1"),
        ("[]", "must be an object, found an array"),
        (BatchFixtures.batch(id: "not-a-uuid", events: [BatchFixtures.point()]), "batch_id: must be a UUID such as 0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f"),
        (BatchFixtures.batch(events: []), "events: must hold at least 1 event (or 0 with diagnostics)"),
        (BatchFixtures.batch(events: [BatchFixtures.point(name: "bad name")]), "events[0].name: is not a valid name: only ASCII letters, digits, '_', '-' and '.' between parts are allowed"),
        (BatchFixtures.batch(events: [BatchFixtures.point(), BatchFixtures.point("zz")]), "events[1].uuid: must be a UUID such as 0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f"),
        (BatchFixtures.batch(events: [BatchFixtures.point(parameters: "[1]")]), "events[0].parameters: must be an object, found an array"),
        (BatchFixtures.batch(events: [BatchFixtures.point().replacingOccurrences(of: "\"point\"", with: "\"blob\"")]), "events[0].kind: must be \"point\" or \"span\""),
        (BatchFixtures.batch(events: [BatchFixtures.point().replacingOccurrences(of: "1750000000000", with: "-5")]), "events[0].timestamp: must be Unix milliseconds (not negative)"),
        (BatchFixtures.batch(events: [BatchFixtures.point().replacingOccurrences(of: "1750000000000", with: "1.5")]), "events[0].timestamp: must be an integer, found a number"),
        (BatchFixtures.batch(events: [BatchFixtures.point().replacingOccurrences(of: s, with: "0193a7c2-0000-7000-8000-000000000002")]), "events[0].session: session 0193a7c2-0000-7000-8000-000000000002 is not listed in context.sessions"),
        (BatchFixtures.batch(events: [BatchFixtures.span().replacingOccurrences(of: "250.125", with: "-1")]), "events[0].duration_ms: must not be negative"),
        (BatchFixtures.batch(events: [BatchFixtures.span().replacingOccurrences(of: #","end":1750000000250"#, with: "")]), "events[0].end: is required"),
        (BatchFixtures.batch(events: [String(BatchFixtures.point().dropLast()) + #","duration_ms":1}"#]), "events[0].duration_ms: only spans have duration_ms"),
        (BatchFixtures.batch(events: [BatchFixtures.point()]).replacingOccurrences(of: #""locale":"en_GB","#, with: ""), "context.locale: is required"),
        (BatchFixtures.batch(events: [BatchFixtures.point(parameters: "null")]), "events[0].parameters: must be an object, found null"),
        (BatchFixtures.batch(events: [String(BatchFixtures.point().dropLast()) + #","start":null}"#]), "events[0].start: only spans have start"),
    ])
    func violations(body: String, message: String) {
        #expect {
            try decode(body)
        } throws: { error in
            (error as? BatchError)?.description == message
        }
    }

    /// An event with `fields` (`"key":value` pairs) added before its closing brace.
    static func with(_ event: String, _ fields: String) -> String { String(event.dropLast()) + "," + fields + "}" }

    @Test("Transaction and parent span decode on points and spans; absent, they are nil")
    func transactions() throws {
        let transaction = "0193A7C2-5B1E-7C3D-9F00-1A2B3C4D5E6F"  // either case, as every uuid
        let batch = try decode(BatchFixtures.batch(events: [
            Self.with(BatchFixtures.point(), #""transaction":"\#(transaction)","parent_span":"00f067aa0ba902b7""#),
            Self.with(BatchFixtures.span(), #""transaction":"\#(transaction.lowercased())","parent_span":"ffffffffffffffff""#),
            Self.with(BatchFixtures.span(), #""transaction":"\#(transaction)""#),
            BatchFixtures.point(),
        ]))
        let id = try #require(UUID(uuidString: transaction))
        #expect(batch.events.map(\.transaction) == [id, id, id, nil])
        #expect(batch.events.map(\.parentSpan?.rawValue) == [0x00f0_67aa_0ba9_02b7, .max, nil, nil])
        #expect(batch.events[0].parentSpan?.description == "00f067aa0ba902b7")
    }

    @Test("A span's id is its uuid's last 8 bytes")
    func spanIDOfUUID() throws {
        let id = try #require(UUID(uuidString: "0193a7c2-5b20-7a11-8c00-77aa55cc33ee"))
        #expect(SpanID(spanUUID: id)?.description == "8c0077aa55cc33ee")
        #expect(SpanID(spanUUID: try #require(UUID(uuidString: "0193a7c2-5b20-7a11-0000-000000000000"))) == nil)
        #expect(SpanID(rawValue: 1)?.description == "0000000000000001")
    }

    static let spanIDRule = "must be 16 lowercase hex digits, not all zeros, such as 1a2b3c4d5e6f7081"
    static let badTransactions: [(String, String)] = [
        (#""transaction":"not-a-uuid""#, "events[0].transaction: must be a UUID such as 0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f"),
        (#""transaction":"0193a7c25b1e7c3d9f001a2b3c4d5e6f""#, "events[0].transaction: must be a UUID such as 0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f"),
        (#""transaction":null"#, "events[0].transaction: must be a UUID string, found null"),
        (#""transaction":7"#, "events[0].transaction: must be a UUID string, found a number"),
        (#""parent_span":"00F067AA0BA902B7""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":"0000000000000000""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":"00f067aa0ba902b""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":"00f067aa0ba902b70""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":"00f067aa-ba902b7""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":"""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":"00f067aa0ba902bé""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":"0x f067aa0ba902b""#, "events[0].parent_span: \(spanIDRule)"),
        (#""parent_span":12345"#, "events[0].parent_span: must be a span id string, found a number"),
        (#""parent_span":null"#, "events[0].parent_span: must be a span id string, found null"),
    ]

    @Test("A broken transaction or parent span is refused with its path, on a point or a span", arguments: Self.badTransactions)
    func brokenTransactions(field: String, message: String) {
        for event in [BatchFixtures.point(), BatchFixtures.span()] {
            #expect {
                try decode(BatchFixtures.batch(events: [Self.with(event, field)]))
            } throws: { error in
                (error as? BatchError)?.description == message
            }
        }
    }

    @Test("Source and origin decode on points and spans; absent, the event is native without an origin")
    func sources() throws {
        let batch = try decode(BatchFixtures.batch(events: [
            Self.with(BatchFixtures.point(), #""source":"web","origin":"https://shop.example.com""#),
            Self.with(BatchFixtures.span(), #""source":"web","origin":"http://localhost:8080""#),
            Self.with(BatchFixtures.point(), #""source":"web","origin":"http://[::1]:65535""#),
            Self.with(BatchFixtures.point(), #""source":"web""#),
            Self.with(BatchFixtures.point(), #""source":"native""#),
            BatchFixtures.point(),
        ]))
        #expect(batch.events.map(\.source) == [.web, .web, .web, .web, .native, .native])
        #expect(batch.events.map(\.origin) == ["https://shop.example.com", "http://localhost:8080", "http://[::1]:65535", nil, nil, nil])
        let longest = "https://" + String(repeating: "a", count: 256 - 8)
        #expect(try decode(BatchFixtures.batch(events: [Self.with(BatchFixtures.point(), #""source":"web","origin":"\#(longest)""#)]))
            .events[0].origin == longest)
    }

    static let originRule = "must be an origin scheme://host[:port] (http or https, lowercase, at most 256 bytes), such as https://shop.example.com"
    static let badSources: [(String, String)] = [
        (#""source":"Web""#, #"events[0].source: must be "native" or "web""#),
        (#""source":"app""#, #"events[0].source: must be "native" or "web""#),
        (#""source":"""#, "events[0].source: must be 1…16 bytes long"),
        (#""source":1"#, "events[0].source: must be a string, found a number"),
        (#""source":null"#, "events[0].source: must be a string, found null"),
        (#""origin":"https://shop.example.com""#, #"events[0].origin: only web events (source "web") have an origin"#),
        (#""source":"native","origin":"https://shop.example.com""#, #"events[0].origin: only web events (source "web") have an origin"#),
        (#""source":"web","origin":"""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://Shop.example.com""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"HTTPS://shop.example.com""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"ftp://shop.example.com""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"file://""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop.example.com/""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop.example.com/cart?x=1""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://user@shop.example.com""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop.example.com:""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop.example.com:0""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop.example.com:080""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop.example.com:65536""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop.example.com:8a""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://[::1""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://[]""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://[::1]x""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://bücher.example""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://shop example.com""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"null""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":"https://\#(String(repeating: "a", count: 256 - 7))""#, "events[0].origin: \(originRule)"),
        (#""source":"web","origin":null"#, "events[0].origin: must be an origin string, found null"),
        (#""source":"web","origin":["https://shop.example.com"]"#, "events[0].origin: must be an origin string, found an array"),
    ]

    @Test("A broken source or origin is refused with its path, on a point or a span", arguments: Self.badSources)
    func brokenSources(field: String, message: String) {
        for event in [BatchFixtures.point(), BatchFixtures.span()] {
            #expect {
                try decode(BatchFixtures.batch(events: [Self.with(event, field)]))
            } throws: { error in
                (error as? BatchError)?.description == message
            }
        }
    }

    @Test("Malformed JSON is a BatchError too")
    func malformed() {
        #expect {
            try decode(#"{"version":1,"#)
        } throws: { error in
            (error as? BatchError)?.reason.hasPrefix("malformed JSON") == true
        }
    }
}

@Suite("Aggregates in a batch, checked against the protocol")
struct AggregateDecoderTests {
    func decode(_ text: String) throws(BatchError) -> Batch {
        try BatchDecoder().decode(Array(text.utf8))
    }

    @Test("A valid aggregate decodes: dimensions sorted, measures decoded and kept verbatim; events may be empty")
    func valid() throws {
        var aggregate = AggregateFixtures.aggregate(values: [8.1, 16.7, 33.4], dimensions: ["screen": "home", "os": "18", "a.b": ""])
        aggregate["overflow"] = nil
        let measures = AggregateFixtures.json(aggregate["measures"] as? [String: Any] ?? [:])
        let batch = try decode(AggregateFixtures.batch(aggregates: [AggregateFixtures.json(aggregate)]))
        #expect(batch.events.isEmpty && batch.aggregates.count == 1)
        let decoded = try #require(batch.aggregates.first)
        #expect(decoded.name == "perf.frame" && decoded.type == "measurement" && decoded.count == 3 && decoded.windowSeconds == 60)
        #expect(decoded.end - decoded.start == 60_000 && !decoded.overflow)
        #expect(decoded.dimensions.map(\.key) == ["a.b", "os", "screen"])
        #expect(decoded.dimensionsJSON == #"{"a.b":"","os":"18","screen":"home"}"#)
        #expect(decoded.measuresJSON == measures)
        let ms = try #require(decoded.measures["ms"])
        #expect(ms.count == 3 && ms.min == 8.1 && ms.max == 33.4 && ms.sum == 8.1 + 16.7 + 33.4)
    }

    @Test("An overflow aggregate, one without measures' values, and events beside aggregates")
    func variants() throws {
        var overflow = AggregateFixtures.aggregate(dimensions: nil)
        overflow["overflow"] = true
        var empty = AggregateFixtures.aggregate(values: [])
        empty["count"] = 5
        empty["measures"] = ["ms": AggregateFixtures.summary([]), "bytes": AggregateFixtures.summary([1, 2])]
        let batch = try decode(AggregateFixtures.batch(events: [BatchFixtures.point()],
                                                       aggregates: [AggregateFixtures.json(overflow), AggregateFixtures.json(empty)]))
        #expect(batch.events.count == 1 && batch.aggregates.count == 2)
        #expect(batch.aggregates[0].overflow && batch.aggregates[0].dimensions.isEmpty && batch.aggregates[0].dimensionsJSON == "{}")
        #expect(batch.aggregates[1].measures["ms"]?.count == 0 && batch.aggregates[1].measures["bytes"]?.count == 2)
    }

    @Test("Events and aggregates share the per-batch limit: over it is 413 (path events)")
    func tooManyRecords() {
        var decoder = BatchDecoder()
        decoder.maxEvents = 2
        let text = AggregateFixtures.batch(events: [BatchFixtures.point()],
                                           aggregates: [AggregateFixtures.json(AggregateFixtures.aggregate()), AggregateFixtures.json(AggregateFixtures.aggregate())])
        #expect(throws: BatchError(path: "events", reason: "holds 1 events and 2 aggregates; the limit is 2 records per batch", isOverLimit: true)) {
            try decoder.decode(Array(text.utf8))
        }
    }

    static let m = "aggregates[0].measures.ms"
    static let cases: [(String, String)] = [
        (AggregateFixtures.batch { $0["uuid"] = "nope" }, "aggregates[0].uuid"),
        (AggregateFixtures.batch { $0["uuid"] = nil }, "aggregates[0].uuid"),
        (AggregateFixtures.batch { $0["session"] = "0193a7c2-0000-7000-8000-000000000002" }, "aggregates[0].session"),
        (AggregateFixtures.batch { $0["name"] = "bad name" }, "aggregates[0].name"),
        (AggregateFixtures.batch { $0["type"] = String(repeating: "t", count: 65) }, "aggregates[0].type"),
        (AggregateFixtures.batch { $0["start"] = -1 }, "aggregates[0].start"),
        (AggregateFixtures.batch { $0["end"] = 1_750_000_019_999 }, "aggregates[0].end"),
        (AggregateFixtures.batch { $0["end"] = 1_750_000_080_001 }, "aggregates[0].end"),
        (AggregateFixtures.batch { $0["window_s"] = 0 }, "aggregates[0].window_s"),
        (AggregateFixtures.batch { $0["window_s"] = 86_401 }, "aggregates[0].window_s"),
        (AggregateFixtures.batch { $0["window_s"] = 60.5 }, "aggregates[0].window_s"),
        (AggregateFixtures.batch { $0["count"] = 0 }, "aggregates[0].count"),
        (AggregateFixtures.batch { $0["count"] = 3.5 }, "aggregates[0].count"),
        (AggregateFixtures.batch { $0["dimensions"] = Dictionary(uniqueKeysWithValues: (0..<9).map { ("k\($0)", "v") }) }, "aggregates[0].dimensions"),
        (AggregateFixtures.batch { $0["dimensions"] = ["screen": 3] }, "aggregates[0].dimensions.screen"),
        (AggregateFixtures.batch { $0["dimensions"] = ["screen": String(repeating: "x", count: 257)] }, "aggregates[0].dimensions.screen"),
        (AggregateFixtures.batch { $0["dimensions"] = [String(repeating: "k", count: 257): "x"] }, #"aggregates[0].dimensions.\#(String(repeating: "k", count: 257))"#),
        (AggregateFixtures.batch { $0["dimensions"] = ["": "x"] }, #"aggregates[0].dimensions[""]"#),
        (AggregateFixtures.batch { $0["dimensions"] = "screen=home" }, "aggregates[0].dimensions"),
        (AggregateFixtures.batch { $0["overflow"] = false }, "aggregates[0].overflow"),
        (AggregateFixtures.batch { $0["overflow"] = true }, "aggregates[0].dimensions"),
        (AggregateFixtures.batch { $0["measures"] = nil }, "aggregates[0].measures"),
        (AggregateFixtures.batch { $0["measures"] = [1] }, "aggregates[0].measures"),
        (AggregateFixtures.batch { $0["measures"] = Dictionary(uniqueKeysWithValues: (0..<257).map { ("m\($0)", AggregateFixtures.summary([1])) }) }, "aggregates[0].measures"),
        (AggregateFixtures.batch { $0["measures"] = ["a.b": AggregateFixtures.summary([1, 2, 3, 4])] }, #"aggregates[0].measures["a.b"].count"#),
        (AggregateFixtures.batch { $0["measures"] = ["ms": 3] }, "aggregates[0].measures.ms"),
        (AggregateFixtures.batch { AggregateFixtures.changeMeasure(&$0) { $0["count"] = 2 } }, "\(m).count"),
        (AggregateFixtures.batch { AggregateFixtures.changeMeasure(&$0) { $0["count"] = -1 } }, "\(m).count"),
        (AggregateFixtures.batch { AggregateFixtures.changeMeasure(&$0) { $0["sum"] = "1" } }, "\(m).sum"),
        (AggregateFixtures.batch { AggregateFixtures.changeMeasure(&$0) { $0["min"] = nil } }, "\(m).min"),
        (AggregateFixtures.batch { AggregateFixtures.changeMeasure(&$0) { $0["min"] = 50.0 } }, "\(m).max"),
        (AggregateFixtures.batch { AggregateFixtures.changeMeasure(&$0) { $0["sketch"] = nil } }, "\(m).sketch"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["relative_accuracy"] = 0.02 } }, "\(m).sketch.relative_accuracy"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["zero_count"] = 1 } }, "\(m).count"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["negative"] = ["offset": 0] } }, "\(m).sketch.negative.counts"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["positive"] = ["offset": 200, "counts": [1, 1, 0, -1]] } }, "\(m).sketch.positive.counts[3]"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["positive"] = ["offset": 200, "counts": [1, 1, 0, 0.5]] } }, "\(m).sketch.positive.counts[3]"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["positive"] = ["offset": Int64.min, "counts": [3]] } }, "\(m).sketch.positive.offset"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["positive"] = ["offset": 39_999, "counts": [1, 1, 1]] } }, "\(m).sketch.positive.counts"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["positive"] = ["offset": 0, "counts": [Int](repeating: 0, count: 2_049)] } }, "\(m).sketch.positive.counts"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["positive"] = ["offset": 0, "counts": [Int64.max, 1]] } }, "\(m).sketch.positive.counts[1]"),
        (AggregateFixtures.batch { AggregateFixtures.changeSketch(&$0) { $0["zero_count"] = Int64.max } }, "\(m).sketch.positive"),
        (AggregateFixtures.batch(aggregates: [AggregateFixtures.json(AggregateFixtures.aggregate()), #"{"uuid":1}"#]), "aggregates[1].uuid"),
        (AggregateFixtures.batch(aggregates: ["[]"]), "aggregates[0]"),
        (String(BatchFixtures.batch(events: []).dropLast()) + #","aggregates":{}}"#, "aggregates"),
    ]

    @Test("Each broken rule is refused with the path of the value at fault", arguments: Self.cases)
    func violations(body: String, path: String) {
        #expect {
            try decode(body)
        } throws: { error in
            guard let error = error as? BatchError, !error.isOverLimit else { return false }
            if error.path != path { Issue.record("expected \(path), got \(error)") }
            return error.path == path
        }
    }

    @Test("The sketch decoder's own bounds hold for what the collector passes on")
    func sketchBounds() throws {
        // Far offsets, the most buckets, and totals near the limit all decode and merge without a trap.
        var aggregate = AggregateFixtures.aggregate(values: [])
        aggregate["count"] = Int64.max
        aggregate["measures"] = ["ms": ["count": Int64.max, "sum": 1e300, "min": -1e300, "max": 1e300,
                                        "sketch": ["relative_accuracy": 0.01, "zero_count": 0,
                                                   "positive": ["offset": 40_000 - 2_048, "counts": [Int.max - 1] + [Int](repeating: 0, count: 2_046) + [1]],
                                                   "negative": ["offset": -40_000, "counts": []]]] as [String: Any]]
        let batch = try decode(AggregateFixtures.batch(aggregates: [AggregateFixtures.json(aggregate)]))
        var merged = try #require(batch.aggregates.first?.measures["ms"])
        #expect(merged.count == UInt64(Int64.max))
        merged.merge(merged)  // 2^64 - 2: still within UInt64
        #expect(merged.quantile(0.99) == 1e300)
    }
}
