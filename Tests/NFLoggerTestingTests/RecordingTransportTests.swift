import Foundation
import NFLogger
import NFLoggerTesting
import Testing

// These tests use the product as an app's tests would: NFLogger and NFLoggerTesting only.

/// A logger on a fresh recording transport's configuration.
func makeLogger(_ transport: RecordingTransport,
                _ configure: (inout Configuration) -> Void = { _ in }) throws -> NFLogger {
    var configuration = transport.configuration()
    configure(&configuration)
    return try NFLogger(configuration: configuration)
}

@Suite("RecordingTransport: what an app uploads, typed")
struct RecordingTransportTests {
    @Test("Points and spans arrive typed: names, types, parameters as LogValue, span durations and end parameters")
    func typedEvents() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        #expect(await logger.logEvent(name: "ui.tap", type: "interaction", parameters: [
            "button": "checkout", "items": 3, "total": 2.0, "express": true,
            "tags": ["a", "b"], "nested": ["x": [1, 2.5, .null] as LogValue],
        ]).isRecorded)
        let (span, started) = await logger.startEvent(name: "flow.checkout", parameters: ["cart": "c-1"])
        #expect(started.isRecorded)
        #expect(await span.end(parameters: ["result": "paid"]).isRecorded)
        let flush = await logger.flush()
        #expect(flush.error == nil && flush.remainingEvents == 0)

        let events = transport.events
        #expect(events.map(\.name).sorted() == ["flow.checkout", "ui.tap"])
        let tap = try #require(transport.events(named: "ui.tap").first)
        #expect(tap.kind == .point && tap.type == "interaction")
        #expect(tap.parameters == [
            "button": "checkout", "items": 3, "total": .double(2.0), "express": true,
            "tags": ["a", "b"], "nested": ["x": [1, 2.5, .null]],
        ])
        #expect(tap.parameters["items"] == .integer(3))  // 3 stays an integer, 2.0 a double
        #expect(tap.end == nil && tap.duration == nil && tap.endParameters.isEmpty && !tap.isAbandoned)

        let checkout = try #require(transport.events(named: "flow.checkout").first)
        #expect(checkout.id == span.id)
        #expect(checkout.kind == .span && checkout.type == "event")
        #expect(checkout.parameters == ["cart": "c-1"] && checkout.endParameters == ["result": "paid"])
        let duration = try #require(checkout.duration)
        #expect(duration >= 0 && duration < 60)
        #expect(checkout.end.map { $0 >= checkout.timestamp } == true)
        #expect(abs(tap.timestamp.timeIntervalSinceNow) < 60)

        // Both in this logger's session, which the batch lists with the app's properties.
        #expect(Set(events.map(\.sessionID)) == [logger.sessionID])
        let batch = try #require(transport.batches.first)
        #expect(batch.isAccepted && batch.response == .accept)
        #expect(batch.appKey == RecordingTransport.appKey)
        #expect(batch.context.appID == "com.example.tests" && batch.context.appVersion == "1")
        #expect(batch.context.sdkName == NFLogger.sdkName && batch.context.sdkVersion == NFLogger.sdkVersion)
        #expect(batch.sessions.map(\.id).contains(logger.sessionID))
        #expect(transport.unreadableUploads.isEmpty)
        await logger.close()
    }

    @Test("A 503 then an acceptance: the same batch goes twice and its events are delivered exactly once")
    func retryAfterServiceUnavailable() async throws {
        let transport = RecordingTransport(responses: [.status(503)])
        let logger = try makeLogger(transport)
        #expect(await logger.logEvent(name: "net.call", parameters: ["attempt": 1]).isRecorded)
        let events = try await transport.waitForEvents(count: 1)

        #expect(events.map(\.name) == ["net.call"])
        let batches = transport.batches
        #expect(batches.map(\.response) == [.status(503), .accept])
        #expect(batches[0].id == batches[1].id && batches[0].events == batches[1].events)
        #expect(batches.filter(\.isAccepted).flatMap(\.events).count == 1)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.uploadedEvents == 1 && diagnostics.waitingForUpload == 0 && diagnostics.retriedUploads == 1)
        await logger.close()
    }

    @Test("Retry-After holds the retry back; a flush meanwhile reports the collector's answer")
    func retryAfterIsHonoured() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport) { $0.upload.countThreshold = 1_000 }  // only flushes upload
        transport.enqueue(.status(503, retryAfter: 1))
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        // Before the request, so no earlier than the 503 whose Retry-After starts the wait: the
        // flush's answer may arrive late on a loaded machine (0.5 s once in CI).
        let refusedAt = Date()
        let flush = await logger.flush()
        guard case .server(503, _)? = flush.error else {
            Issue.record("expected the 503 in the flush, got \(flush)")
            return
        }
        try await transport.waitForEvents(count: 1)
        #expect(Date().timeIntervalSince(refusedAt) >= 0.9)
        #expect(transport.batches.map(\.response) == [.status(503, retryAfter: 1), .accept])
        await logger.close()
    }

    @Test("A dropped connection, then an acceptance: delivered once")
    func networkError() async throws {
        let transport = RecordingTransport(responses: [.networkError, .networkError])
        let logger = try makeLogger(transport)
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        try await transport.waitForEvents(count: 1)
        #expect(transport.batches.map(\.response) == [.networkError, .networkError, .accept])
        #expect(Set(transport.batches.map(\.id)).count == 1)
        #expect(transport.events.count == 1)
        await logger.close()
    }

    @Test("A responder refusing one event gets it quarantined; the others are delivered")
    func responderQuarantines() async throws {
        let transport = RecordingTransport()
        transport.setResponder { events in
            events.contains { $0.name == "poison.event" } ? .status(400, path: "events[0]") : .accept
        }
        // Only the flush uploads: the interval timer, firing while a loaded machine is still
        // logging, would settle the poison event before the flush whose counts are checked.
        let logger = try makeLogger(transport) {
            $0.upload.countThreshold = 1_000
            $0.upload.interval = 3_600
        }
        for index in 0..<5 { #expect(await logger.logEvent(name: "ui.tap", parameters: ["index": index]).isRecorded) }
        #expect(await logger.logEvent(name: "poison.event").isRecorded)
        for index in 5..<10 { #expect(await logger.logEvent(name: "ui.tap", parameters: ["index": index]).isRecorded) }
        let flush = await logger.flush()
        #expect(flush.error == nil && flush.quarantinedEvents == 1 && flush.remainingEvents == 0)
        let taps = transport.events(named: "ui.tap")  // in two or more batches, in no set order
        #expect(taps.count == 10 && Set(taps.compactMap { $0.parameters["index"] }) == Set((0..<10).map { LogValue.integer(Int64($0)) }))
        #expect(transport.events(named: "poison.event").isEmpty)
        await logger.close()
    }

    @Test("Any gzip level is read: stored, fixed and dynamic deflate blocks", arguments: [0, 1, 6, 9])
    func gzipLevels(level: Int) async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport) {
            $0.upload.countThreshold = 10_000
            // Only the flush uploads: 400 awaited calls can outlast the 30 s timer when the
            // whole suite loads both cores (seen: 42 s), and it would take some of them first.
            $0.upload.interval = 3_600
            $0.upload.gzipLevel = level
        }
        // About 100 KB of JSON: several stored blocks at level 0, long matches at the others.
        for index in 0..<400 {
            _ = await logger.logEvent(name: "load.item", parameters: ["index": index, "text": "item \(index) é🙂 \"quoted\"\n"])
        }
        let flush = await logger.flush()
        #expect(flush.error == nil && flush.uploadedEvents == 400)
        let events = transport.events
        #expect(transport.unreadableUploads.isEmpty)
        #expect(events.count == 400)
        #expect(events.last?.parameters == ["index": 399, "text": "item 399 é🙂 \"quoted\"\n"])
        await logger.close()
    }

    /// A batch written by hand, as another SDK would send it: one session and one event whose
    /// fields after its uuid and session are `event` (JSON members, no braces).
    static func batch(event: String) -> Data {
        let session = UUID()
        return Data("""
            {"version":1,"batch_id":"\(UUID())","sent_at":1750000000500,"sdk":{"name":"Other","version":"2"},
             "context":{"app_id":"a","app_version":"1","os_name":"Linux","os_version":"6","locale":"en",
                        "sessions":[{"id":"\(session)","started_at":1750000000000}]},
             "events":[{"uuid":"\(UUID())","session":"\(session)",\(event)}]}
            """.utf8)
    }

    @Test("A batch accepted twice counts its events once; the answer says they are duplicates")
    func deduplicates() async throws {
        let transport = RecordingTransport()
        let body = Self.batch(event: #""name":"ui.tap","kind":"point","type":"event","timestamp":1750000000000,"#
                                  + #""parameters":{"big":9007199254740993,"small":-1e-5}"#)  // uncompressed: identity is read too
        let request = TransportRequest(url: URL(string: "https://collector.invalid/v1/events")!, method: "POST",
                                       headers: ["Content-Type": "application/json"], body: body)
        let first = try await transport.send(request)
        let second = try await transport.send(request)
        #expect(first.status == 200 && second.status == 200)
        let answer = try #require(try JSONSerialization.jsonObject(with: second.body) as? [String: Any])
        #expect(answer["accepted"] as? Int == 0 && answer["duplicates"] as? Int == 1)
        #expect(transport.batches.count == 2 && transport.events.count == 1)
        let event = try #require(transport.events.first)
        #expect(event.parameters == ["big": .integer(9_007_199_254_740_993), "small": .double(-1e-5)])
        #expect(event.timestamp == Date(timeIntervalSince1970: 1_750_000_000))
        #expect(transport.batches[0].sessions.first?.endedAt == nil)
    }

    @Test("A body that is not a batch is answered 400 (415 for an unknown encoding) and listed, not recorded")
    func unreadableUploads() async throws {
        let transport = RecordingTransport()
        let url = URL(string: "https://collector.invalid/v1/events")!
        let garbage = try await transport.send(TransportRequest(url: url, method: "POST", headers: ["Content-Encoding": "gzip"],
                                                                body: Data(repeating: 0x1F, count: 40)))
        #expect(garbage.status == 400)
        let missing = try await transport.send(TransportRequest(url: url, method: "POST", headers: [:], body: Data(#"{"version":1}"#.utf8)))
        #expect(missing.status == 400)
        let error = try #require(try JSONSerialization.jsonObject(with: missing.body) as? [String: [String: String]])
        #expect(error["error"]?["path"] == "batch_id")
        let brotli = try await transport.send(TransportRequest(url: url, method: "POST", headers: ["content-encoding": "br"], body: Data()))
        #expect(brotli.status == 415)
        #expect(transport.unreadableUploads.count == 3 && transport.batches.isEmpty)
    }

    @Test("A batch the collector would refuse (here an event name with a space) is refused as the collector does: 400 with its path, listed, not recorded")
    func refusedAsTheCollectorWould() async throws {
        let transport = RecordingTransport()
        let body = Self.batch(event: #""name":"ui tap","kind":"point","type":"event","timestamp":1750000000000"#)
        let answer = try await transport.send(TransportRequest(url: URL(string: "https://collector.invalid/v1/events")!, method: "POST",
                                                               headers: ["Content-Type": "application/json"], body: body))
        #expect(answer.status == 400)
        let error = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: [String: String]])
        #expect(error["error"]?["path"] == "events[0].name")
        #expect(transport.unreadableUploads.count == 1 && transport.batches.isEmpty && transport.events.isEmpty)
    }

    @Test("Waiting times out with a message that says what arrived")
    func waitTimesOut() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        try await transport.waitForEvents(count: 1)
        do {
            try await transport.waitForEvents(count: 2, timeout: 0.5)
            Issue.record("the wait should have timed out")
        } catch let timeout as RecordingTransport.WaitTimeout {
            #expect(timeout.description.contains("2 events; 1 arrived (ui.tap)"), "\(timeout)")
        }
        await logger.close()
    }

    @Test("Policies: 404 until one is served, then 200 with an ETag and 304 while unchanged")
    func policies() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        #expect(await logger.refreshPolicy() == .notServed)
        transport.servePolicy(Data(#"{"version":1,"mode":"specific","rules":{"allow":["ui.*"]}}"#.utf8))
        #expect(await logger.refreshPolicy() == .applied)
        #expect(await logger.refreshPolicy() == .unchanged)
        #expect(await logger.logEvent(name: "net.call") == .filtered(.notSelected))
        #expect(await logger.logEvent(name: "ui.tap").isRecorded)
        transport.servePolicy(nil)
        #expect(await logger.refreshPolicy() == .notServed)
        #expect(await logger.logEvent(name: "net.call").isRecorded)
        #expect(transport.policyRequests >= 4)
        await logger.close()
    }

    @Test("The configuration helper: a database of its own, this transport, the app key, and uploads without a flush")
    func configurationHelper() async throws {
        let transport = RecordingTransport()
        let first = transport.configuration()
        let second = transport.configuration(appID: "com.example.other", appVersion: "2.0")
        #expect(first.databaseURL.deletingLastPathComponent() != second.databaseURL.deletingLastPathComponent())
        #expect(first.network.transport as? RecordingTransport === transport)
        #expect(first.appKey == RecordingTransport.appKey && first.uploadURL != nil && first.policyURL != nil)
        #expect(second.appID == "com.example.other" && second.appVersion == "2.0")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflogger-testing-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = try NFLogger(configuration: transport.configuration(databaseDirectory: directory))
        #expect(logger.configuration.databaseURL.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
        for index in 0..<3 { #expect(await logger.logEvent(name: "ui.tap", parameters: ["index": index]).isRecorded) }
        let events = try await transport.waitForEvents(count: 3)  // no flush: each event starts an upload
        #expect(Set(events.compactMap { $0.parameters["index"] }) == [0, 1, 2])
        await logger.close()
    }
}
