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

    @Test("Malformed JSON is a BatchError too")
    func malformed() {
        #expect {
            try decode(#"{"version":1,"#)
        } throws: { error in
            (error as? BatchError)?.reason.hasPrefix("malformed JSON") == true
        }
    }
}
