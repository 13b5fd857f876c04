import Foundation
import Testing
@testable import NFLogger

/// The Uploader's rules as small pure pieces: the backoff arithmetic with an injected random
/// source, the status table, and reading `Retry-After`.
@Suite("Upload rules")
struct UploadRulesTests {
    /// Always the same draw: 0 gives the bottom of the jitter window, `.max` the top.
    struct Constant: RandomNumberGenerator {
        let value: UInt64
        mutating func next() -> UInt64 { value }
    }

    @Test("Full jitter: the window's ceiling doubles from the first wait up to the maximum; the floor is 0")
    func fullJitter() {
        var top = Backoff(initial: 1, maximum: 10, jitter: .full, random: Constant(value: .max))
        let ceilings = (0..<6).map { _ in top.failed().rounded() }
        #expect(ceilings == [1, 2, 4, 8, 10, 10])
        var bottom = Backoff(initial: 1, maximum: 10, jitter: .full, random: Constant(value: 0))
        #expect((0..<6).map { _ in bottom.failed() } == Array(repeating: 0, count: 6))
        #expect(bottom.failures == 6)
        bottom.reset()
        #expect(bottom.failures == 0)
    }

    @Test("A wait drawn for another count (one batch's own failures) uses that count's window and leaves the count in a row alone")
    func delayForAnotherCount() {
        var backoff = Backoff(initial: 1, maximum: 10, jitter: .full, random: Constant(value: .max))
        for _ in 0..<3 { _ = backoff.failed() }
        #expect(backoff.delay(afterFailures: 1).rounded() == 1)
        #expect(backoff.delay(afterFailures: 2).rounded() == 2)
        #expect(backoff.delay(afterFailures: 0).rounded() == 1)  // as a first failure
        #expect(backoff.failures == 3)
        #expect(backoff.failed().rounded() == 8)
    }

    @Test("Half jitter waits between half the ceiling and the ceiling, never at once")
    func halfJitter() {
        var bottom = Backoff(initial: 60, maximum: 3600, jitter: .half, random: Constant(value: 0))
        #expect([bottom.failed(), bottom.failed(), bottom.failed()] == [30, 60, 120])
        var small = Backoff(initial: 60, maximum: 1, jitter: .half, random: Constant(value: .max))
        #expect(abs(small.failed() - 1) < 0.001)  // a maximum below the first wait caps it
    }

    @Test("Retry-After is a floor (capped at a day), whatever the jitter drew; a thousand failures do not overflow")
    func retryAfterFloor() {
        var backoff = Backoff(initial: 0.02, maximum: 0.2, random: Constant(value: 0))
        #expect(backoff.failed(retryAfter: 3) == 3)
        #expect(backoff.failed(retryAfter: 10_000_000) == 86_400)
        for _ in 0..<1_000 { _ = backoff.failed() }
        var top = Backoff(initial: 1, maximum: 86_400, random: Constant(value: .max))
        for _ in 0..<1_000 { #expect(top.failed() <= 86_400) }
    }

    static func response(_ status: Int, path: String? = nil, retryAfter: String? = nil) -> TransportResponse {
        var error: [String: Any] = ["message": "m"]
        if let path { error["path"] = path }
        let body = (try? JSONSerialization.data(withJSONObject: ["error": error])) ?? Data()
        return TransportResponse(status: status, headers: retryAfter.map { ["Retry-After": $0] } ?? [:], body: body)
    }

    @Test("The status table: delivered, split, retry (with Retry-After), pause")
    func statusTable() {
        let table: [(TransportResponse, UploadVerdict)] = [
            (Self.response(200), .delivered),
            (Self.response(202), .delivered),
            (Self.response(413, path: "events"), .split),
            (Self.response(400, path: "events[3].name"), .split),
            (Self.response(422, path: "events[0].parameters"), .split),
            (Self.response(400, path: "context.app_id"), .pause),
            (Self.response(400), .pause),
            (Self.response(408), .retry(after: nil)),
            (Self.response(429, retryAfter: "7"), .retry(after: 7)),
            (Self.response(500), .retry(after: nil)),
            (Self.response(503, retryAfter: "5"), .retry(after: 5)),
            (Self.response(401), .pause),
            (Self.response(403), .pause),
            (Self.response(404), .pause),
            (Self.response(301), .pause),
        ]
        for (response, verdict) in table {
            #expect(UploadVerdict(response) == verdict, "status \(response.status)")
        }
    }

    @Test("Retry-After as seconds or an HTTP date; garbage is ignored; a past date is no wait")
    func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        #expect(Self.response(429, retryAfter: " 12 ").retryAfter(now: now) == 12)
        #expect(Self.response(429, retryAfter: "-3").retryAfter(now: now) == 0)
        #expect(Self.response(429, retryAfter: "Sun, 15 Jun 2025 15:07:00 GMT").retryAfter(now: now) == 20)
        #expect(Self.response(429, retryAfter: "Sun, 15 Jun 2025 15:00:00 GMT").retryAfter(now: now) == 0)
        #expect(Self.response(429, retryAfter: "soon").retryAfter(now: now) == nil)
        #expect(Self.response(429).retryAfter(now: now) == nil)
    }

    @Test("The collector's error body: message and path; a body that is not one gives its start")
    func errorBody() {
        let response = Self.response(400, path: "events[2][\"a.b\"]")
        #expect(response.errorMessage == "m")
        #expect(response.errorPath == "events[2][\"a.b\"]")
        let plain = TransportResponse(status: 502, body: Data("Bad Gateway".utf8))
        #expect(plain.errorMessage == "Bad Gateway")
        #expect(plain.errorPath == nil)
    }
}
