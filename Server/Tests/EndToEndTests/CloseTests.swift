import CollectorTestSupport
import Foundation
import NFLogger
import Synchronization
import Testing

/// A transport whose requests never get an answer: each waits until its task is cancelled.
private final class HangingTransport: HTTPTransport {
    private let counts = Mutex((started: 0, cancelled: 0, paths: [String]()))

    var started: Int { counts.withLock { $0.started } }
    var cancelled: Int { counts.withLock { $0.cancelled } }
    var paths: [String] { counts.withLock { $0.paths } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        counts.withLock { $0.started += 1; $0.paths.append(request.url.path) }
        do {
            try await Task.sleep(for: .seconds(3_600))
        } catch {
            counts.withLock { $0.cancelled += 1 }
            throw error
        }
        throw URLError(.timedOut)
    }
}

@Suite("Closing a logger")
struct CloseTests {
    @Test("close() cancels the requests on the network: an upload and a policy check that get no answer end at once; the event stays stored")
    func closeCancelsRequests() async throws {
        let transport = HangingTransport()
        let scratch = TemporaryDirectory()
        var configuration = Configuration(databaseURL: scratch.databaseURL, appID: "com.example.e2e", appVersion: "1.0")
        configuration.uploadURL = URL(string: "http://127.0.0.1:9/v1/events")
        configuration.policyURL = URL(string: "http://127.0.0.1:9/v1/policy")
        configuration.appKey = "a-key"
        configuration.network.transport = transport
        let logger = try NFLogger(configuration: configuration)
        let status = await logger.logEvent(name: "ui.tap")
        guard case .recorded = status else { Issue.record("not recorded: \(status)"); return }
        let flush = Task { await logger.flush() }
        let deadline = ContinuousClock.now + hangLimit
        while Set(transport.paths) != ["/v1/events", "/v1/policy"], ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(Set(transport.paths) == ["/v1/events", "/v1/policy"], "both requests went out: \(transport.paths)")

        let closing = ContinuousClock.now
        await logger.close()
        // The requests never end on their own: cancelled at all, close cancelled them.
        while transport.cancelled < transport.started, ContinuousClock.now < closing + hangLimit {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(transport.cancelled == transport.started, "\(transport.cancelled) of \(transport.started) requests cancelled")
        let flushed = await flush.value
        #expect(flushed.uploadedEvents == 0 && flushed.error == .closed, "\(flushed)")

        // The event was not delivered: the next logger on the file still holds it.
        let reopened = try NFLogger(configuration: configuration)
        let diagnostics = await reopened.diagnostics()
        #expect(diagnostics.storedPointEvents == 1, "\(diagnostics)")
        await reopened.close()
    }
}
