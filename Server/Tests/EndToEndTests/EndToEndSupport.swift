import CollectorTestSupport
import FaultProxy
import Foundation
import InMemoryLogging
import Logging
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
@testable import NFLogger
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An SDK configuration pointed at a test collector, with fast retries.
func configuration(_ scratch: TemporaryDirectory, collector url: URL, transport: (any HTTPTransport)? = nil) -> Configuration {
    var configuration = Configuration(databaseURL: scratch.databaseURL, appID: "com.example.e2e", appVersion: "1.0")
    configuration.uploadURL = url.appendingPathComponent("v1/events")
    configuration.appKey = TestCollector.appKey
    configuration.network.transport = transport
    // Not the default 30 s: a collector a loaded machine makes slow to answer is waited for, not
    // given up on and sent the batch again (which the tests would count as a duplicate).
    if transport == nil { configuration.upload.requestTimeout = hangLimitSeconds }
    configuration.upload.interval = 3600                 // tests drive uploads with flush()
    configuration.upload.countThreshold = 1_000_000
    configuration.upload.initialBackoff = 0.02
    configuration.upload.maxBackoff = 0.2
    configuration.limits.maxPendingEvents = 200_000
    configuration.limits.maxStoredEvents = 10_000_000  // these tests are about delivery, not pruning
    return configuration
}

/// Logs `points` point events and `spans` ended spans; returns the ids whose completion said `.recorded`.
func logEvents(_ logger: NFLogger, points: Int, spans: Int = 0, prefix: String = "e2e") async -> Set<UUID> {
    let receipts = Mutex<Set<UUID>>([])
    let total = points + 2 * spans
    let done = Mutex<Int>(0)
    await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
        let complete: LogCompletion = { status in
            if case .recorded(let id) = status { receipts.withLock { _ = $0.insert(id) } }
            if done.withLock({ $0 += 1; return $0 }) == total { finished.resume() }
        }
        for index in 0..<points {
            logger.logEvent(name: "\(prefix).point", parameters: ["index": index, "screen": "home"], completion: complete)
        }
        for index in 0..<spans {
            logger.startEvent(name: "\(prefix).span", parameters: ["index": index], completion: complete)
                .end(parameters: ["ok": true], completion: complete)
        }
        if total == 0 { finished.resume() }
    }
    return receipts.withLock { $0 }
}

/// The receipts a child has written to `path` so far, from the file's size alone (each is a
/// 36-character uuid and a newline): a child writes hundreds of thousands, and reading them all
/// at every look would cost more than the work it measures. 0 if the file does not exist yet.
func receiptCount(_ path: String) -> Int {
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    return size / 37
}

/// Waits until `path` holds `count` receipts: progress, not time, so a kill lands after a child
/// has done some work however slow the machine is. `hangLimit` only bounds a hang.
func waitForReceipts(_ path: String, atLeast count: Int) async throws {
    let deadline = ContinuousClock.now + hangLimit
    while receiptCount(path) < count {
        guard ContinuousClock.now < deadline else {
            struct NoProgress: Error, CustomStringConvertible { let description: String }
            throw NoProgress(description: "\(path) did not reach \(count) receipts within \(hangLimit)")
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Flushes until nothing is left, waiting out backoffs; fails the test if that never happens
/// (`timeout` only bounds a hang).
@discardableResult
func deliverAll(_ logger: NFLogger, timeout: Duration = hangLimit) async -> FlushResult {
    let deadline = ContinuousClock.now + timeout
    var result = await logger.flush()
    while result.remainingEvents > 0 || result.error != nil {
        if ContinuousClock.now > deadline {
            Issue.record("not delivered within \(timeout): \(result)")
            return result
        }
        try? await Task.sleep(for: .milliseconds(25))
        result = await logger.flush()
    }
    return result
}

/// The uuids the collector stored, from its export.
func storedIDs(_ collector: some CollectorUnderTest) async throws -> [UUID] {
    try await collector.exportedEvents().map(\.event.id)
}

/// A transport that puts faults in front of the real collector, on purpose: each request takes
/// the next fault from the script (then passes), and every request is recorded.
final class FaultInjectingTransport: HTTPTransport {
    enum Fault: Sendable {
        /// Answer with this status without reaching the collector.
        case status(Int, retryAfter: String? = nil)
        /// Fail before the request reaches the collector (connection refused or reset).
        case dropBeforeSending
        /// Deliver the request (the collector commits), then lose the response.
        case dropAfterResponse
        case pass
    }

    struct Sent: Sendable {
        let at: ContinuousClock.Instant
        let batchID: String
        let events: Int
        let fault: String

        /// What a failure message shows of it.
        var summary: String { "\(fault) \(events) events, batch \(batchID.prefix(8))" }
    }

    private let real = DefaultHTTPTransport(timeout: hangLimitSeconds)
    private let script: Mutex<[Fault]>
    private let log = Mutex<[Sent]>([])

    init(_ script: [Fault]) {
        self.script = Mutex(script)
    }

    var sent: [Sent] { log.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let fault = script.withLock { $0.isEmpty ? .pass : $0.removeFirst() }
        let (batchID, events) = Self.peek(request.body)
        log.withLock { $0.append(Sent(at: .now, batchID: batchID, events: events, fault: "\(fault)")) }
        switch fault {
        case .status(let status, let retryAfter):
            return TransportResponse(status: status, headers: retryAfter.map { ["Retry-After": $0] } ?? [:],
                                body: Data(#"{"error":{"message":"injected \#(status)"}}"#.utf8))
        case .dropBeforeSending:
            throw URLError(.networkConnectionLost)
        case .dropAfterResponse:
            _ = try await real.send(request)
            throw URLError(.networkConnectionLost)
        case .pass:
            return try await real.send(request)
        }
    }

    /// The batch id and event count of a gzip batch body.
    static func peek(_ body: Data) -> (String, Int) {
        guard let json = try? Gzip.decompress(Array(body), maxOutputBytes: 64 << 20),
              let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else { return ("?", 0) }
        return (object["batch_id"] as? String ?? "?", (object["events"] as? [Any])?.count ?? 0)
    }
}

extension LogStatus {
    var recordedID: UUID? {
        if case .recorded(let id) = self { return id }
        return nil
    }
}

/// A loopback port held by a socket that is bound but not listening: connecting to it is refused
/// (a collector that is down), and no other test's collector can take it meanwhile. Listening,
/// it is a black hole instead: the kernel completes each handshake into the backlog, and nothing
/// ever reads or answers.
final class ReservedPort: @unchecked Sendable {
    // @unchecked: `fd` is only changed by `release()`, called once by the owning test.
    private var fd: Int32
    let port: Int

    init(listening: Bool = false) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard fd >= 0, bound == 0, named == 0, !listening || listen(fd, 128) == 0 else { throw CocoaError(.fileWriteUnknown) }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Lets the port go, for a collector to listen on it.
    func release() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit { release() }
}

/// Every message a `Logger` made, at trace level and up, for tests that read the SDK's log:
/// swift-log's in-memory handler, each entry rendered as one line to search.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: String
        /// The whole entry as one line, to search for what must (not) appear.
        var line: String { "[\(level)] \(message) \(metadata)" }
    }

    private let handler = InMemoryLogHandler()

    var entries: [Entry] {
        handler.entries.map { entry in
            let rendered = entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return Entry(level: entry.level, message: entry.message.description, metadata: rendered)
        }
    }

    var logger: Logger {
        let handler = self.handler
        var logger = Logger(label: "nflogger.test") { _ in handler }
        logger.logLevel = .trace
        return logger
    }
}

extension FaultProxy {
    /// A fault proxy in front of `collector`, started: `rate` of the uploads faulted with every
    /// kind of fault, decided by `seed`; slow answers trickle fast enough for the tests' timeouts.
    static func start(before collector: TestCollector, rate: Double, seed: UInt64 = 1,
                      _ adjust: (inout FaultProxyConfiguration) -> Void = { _ in }) async throws -> FaultProxy {
        var settings = FaultProxyConfiguration(upstreamPort: collector.port)
        settings.faultRate = rate
        settings.seed = seed
        settings.slowByteInterval = .milliseconds(2)
        settings.stallLimit = .seconds(10)
        adjust(&settings)
        let proxy = FaultProxy(settings)
        try await proxy.start()
        return proxy
    }
}

/// The SDK's clock, moved by hand: a rule about how long something waits is checked by moving
/// time past (or short of) the wait, so it holds however slow the machine is.
final class ManualClock: EventClock {
    private let now = Mutex<(wall: Int64, mono: UInt64)>((1_750_000_000_000, 1_000_000_000))

    func wallMilliseconds() -> Int64 { now.withLock { $0.wall } }
    func monotonicNanoseconds() -> UInt64 { now.withLock { $0.mono } }

    /// Moves both readings on by `seconds`.
    func advance(_ seconds: TimeInterval) {
        now.withLock {
            $0.wall += seconds.milliseconds
            $0.mono += seconds.nanoseconds
        }
    }
}
