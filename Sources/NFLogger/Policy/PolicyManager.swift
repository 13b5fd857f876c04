import Dispatch
import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// Keeps the policy current: asks the collector on start and every refresh interval (with
/// `If-None-Match`), checks what comes back (signature, size, schema, expiry), applies it
/// through the facade, and caches it on disk. Anything refused leaves the last good policy in
/// force, and says why in diagnostics and in the SDK's log.
///
/// Its state lives on its own serial queue; the network call runs elsewhere and reports back.
final class PolicyManager: @unchecked Sendable {
    // @unchecked: every mutable property is read and written only on `queue`.
    private let queue = DispatchQueue(label: "nflogger.policy", qos: .utility)
    private let url: URL
    private let appKey: String
    private let transport: any HTTPTransport
    private let verifier: PolicyVerifier?
    private let cache: PolicyCache
    /// Seconds.
    private let defaultRefresh: TimeInterval
    private let logger: Logger
    private let completionQueue: DispatchQueue
    private let apply: @Sendable (Policy?) -> Void
    /// What is in force when no fetched policy is: the configuration's default, or nothing.
    private let fallbackSource: PolicyStatus.Source

    /// The policy in force with what came with it; `nil` when the default (or none) applies.
    private var current: (policy: Policy, body: Data, etag: String?)?
    /// Read from any thread (diagnostics); written only on `queue`.
    private let statusBox: Lock<PolicyStatus>
    private var status: PolicyStatus {
        get { statusBox.withLock { $0 } }
        set { statusBox.withLock { $0 = newValue } }
    }
    private var inFlight = false
    /// The policy request on the network, cancelled by ``close()``.
    private var fetch: Task<Void, Never>?
    private var waiting: [@Sendable (PolicyUpdate) -> Void] = []
    private var refreshTimer: (any DispatchSourceTimer)?
    private var expiryTimer: (any DispatchSourceTimer)?
    private var closed = false
    /// Checks in a row that got no usable answer back off from ``retryInterval`` up to the
    /// refresh interval, with jitter so a fleet does not hammer a collector that is down.
    private var backoff = Backoff(initial: PolicyManager.retryInterval, maximum: PolicyManager.retryInterval, jitter: .half)

    /// The first wait after a check that got no usable answer; it doubles (with jitter) up to the
    /// refresh interval, and is never shorter than the collector's `Retry-After`. Seconds.
    static let retryInterval: TimeInterval = 60

    init(url: URL, appKey: String, transport: any HTTPTransport, verifier: PolicyVerifier?, cache: PolicyCache,
         defaultRefresh: TimeInterval, logger: Logger, completionQueue: DispatchQueue,
         initial: (policy: Policy, body: Data, etag: String?)?, fallbackSource: PolicyStatus.Source,
         apply: @escaping @Sendable (Policy?) -> Void) {
        self.url = url
        self.appKey = appKey
        self.transport = transport
        self.verifier = verifier
        self.cache = cache
        self.defaultRefresh = defaultRefresh
        self.logger = logger
        self.completionQueue = completionQueue
        self.current = initial
        self.fallbackSource = fallbackSource
        self.statusBox = Lock(PolicyStatus(source: initial == nil ? fallbackSource : .cache, etag: initial?.etag,
                                            appliedAt: initial == nil ? nil : Date()))
        self.apply = apply
    }

    deinit {
        refreshTimer?.cancel()
        expiryTimer?.cancel()
    }

    /// Reads the cached policy, if there is a valid one: a file of at most 64 KiB, read once when
    /// the logger is created so its policy applies from the first call.
    static func loadCached(_ cache: PolicyCache, verifier: PolicyVerifier?, logger: Logger) -> (policy: Policy, body: Data, etag: String?)? {
        guard let entry = cache.load() else { return nil }
        let body = Data(entry.body.utf8)
        do {
            try verifier?.verify(body, signature: entry.signature)
            let policy = try Policy.parse(body)
            return (policy, body, entry.etag)
        } catch {
            logger.warning("the cached policy is not applied", metadata: ["reason": "\(error)"])
            return nil
        }
    }

    func start() {
        queue.async {
            if let policy = self.current?.policy { self.scheduleExpiry(policy) }
            self.check(completion: nil)
        }
    }

    func refresh(completion: @escaping @Sendable (PolicyUpdate) -> Void) {
        queue.async { self.check(completion: completion) }
    }

    func close() {
        queue.async {
            self.closed = true
            self.refreshTimer?.cancel()
            self.expiryTimer?.cancel()
            self.fetch?.cancel()  // its settle tells the waiters .closed
        }
    }

    /// The policy's story so far, for diagnostics.
    var currentStatus: PolicyStatus { status }

    // MARK: On `queue`

    private func check(completion: (@Sendable (PolicyUpdate) -> Void)?) {
        if closed {
            if let completion { completionQueue.async { completion(.failed(.closed)) } }
            return
        }
        if let completion { waiting.append(completion) }
        guard !inFlight else { return }
        inFlight = true
        var headers = [WireProtocol.appKeyHeader: appKey, "Accept": "application/json"]
        if let etag = current?.etag { headers["If-None-Match"] = etag }
        let request = TransportRequest(url: url, method: "GET", headers: headers, body: Data())
        logger.trace("checking for a newer policy", metadata: ["etag": "\(current?.etag ?? "-")"])
        let transport = self.transport
        fetch = Task {
            let outcome: Result<TransportResponse, any Error>
            do { outcome = .success(try await transport.send(request)) } catch { outcome = .failure(error) }
            self.queue.async { self.settle(outcome) }
        }
    }

    private func settle(_ outcome: Result<TransportResponse, any Error>) {
        inFlight = false
        fetch = nil
        guard !closed else {
            // Closed while the request was out: apply nothing, write nothing, tell the waiters.
            let waiters = waiting
            waiting = []
            if !waiters.isEmpty { completionQueue.async { for waiter in waiters { waiter(.failed(.closed)) } } }
            return
        }
        let update: PolicyUpdate
        var retryAfter: TimeInterval?
        switch outcome {
        case .failure(let failure as UntrustedCollector):
            // A security event, as for uploads: said at error level.
            logger.error("refusing the collector's certificate for the policy", metadata: ["host": "\(failure.host)"])
            update = .failed(.network(failure.description))
        case .failure(let error):
            update = .failed(.network(describeTransportError(error)))
        case .success(let response):
            switch response.status {
            case 200: update = accept(response)
            case 304: update = .unchanged
            case 404: update = withdraw()
            default:
                update = .failed(.http(status: response.status))
                retryAfter = response.retryAfter()
            }
        }
        // A policy whose expiry passed while the device slept goes now, not at the timer.
        if let current, current.policy.isExpired(at: Date()) { expire(current.policy) }
        status.lastCheck = Date()
        switch update {
        case .applied, .unchanged, .notServed: (status.lastError, status.lastFetchError) = (nil, nil)
        case .rejected(let error):
            (status.lastError, status.lastFetchError) = (error, nil)
            logger.error("policy rejected; the last good policy stays in force", metadata: ["reason": "\(error)"])
        case .failed(let error):
            (status.lastError, status.lastFetchError) = (nil, error)
            logger.debug("policy check failed", metadata: ["reason": "\(error)"])
        }
        if case .failed = update {
            backoff.maximum = refreshInterval
            scheduleRefresh(after: backoff.failed(retryAfter: retryAfter))
        } else {
            backoff.reset()
            scheduleRefresh(after: refreshInterval)
        }
        let waiters = waiting
        waiting = []
        if !waiters.isEmpty { completionQueue.async { for waiter in waiters { waiter(update) } } }
    }

    /// Checks a 200 answer; applies and caches it if it passes.
    private func accept(_ response: TransportResponse) -> PolicyUpdate {
        let body = response.body
        if let current, current.body == body { return .unchanged }  // a collector without ETags
        let policy: Policy
        do throws(PolicyError) {
            guard body.count <= Policy.maxBytes else { throw .tooLarge(bytes: body.count) }
            try verifier?.verify(body, signature: response.header(PolicyVerifier.header))
            policy = try Policy.parse(body)
        } catch {
            return .rejected(error)
        }
        let etag = response.header("ETag")
        current = (policy, body, etag)
        status.source = .collector
        status.etag = etag
        status.appliedAt = Date()
        apply(policy)
        scheduleExpiry(policy)
        logger.debug("policy applied", metadata: ["mode": "\(policy.kind.rawValue)", "etag": "\(etag ?? "-")"])
        do {
            try cache.save(PolicyCache.Entry(body: String(decoding: body, as: UTF8.self), etag: etag,
                                             signature: response.header(PolicyVerifier.header), fetchedAt: Date()))
        } catch {
            logger.warning("the policy could not be cached; the next start will wait for the collector", metadata: ["reason": "\(error)"])
        }
        return .applied
    }

    /// The collector has no policy for this app (any more): the default applies again, and the
    /// cached copy goes, so an operator can go back to the defaults by removing a policy file.
    private func withdraw() -> PolicyUpdate {
        guard current != nil else { return .notServed }
        current = nil
        expiryTimer?.cancel()
        status.source = fallbackSource
        status.etag = nil
        status.appliedAt = Date()
        apply(nil)
        try? FileManager.default.removeItem(at: cache.url)
        logger.debug("the collector serves no policy for this app any more; the default applies")
        return .notServed
    }

    private var refreshInterval: TimeInterval { current?.policy.refreshInterval ?? defaultRefresh }

    private func scheduleRefresh(after interval: TimeInterval) {
        refreshTimer?.cancel()
        guard !closed else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval.dispatchInterval, leeway: .seconds(1))
        timer.setEventHandler { [weak self] in self?.check(completion: nil) }
        timer.resume()
        refreshTimer = timer
        status.nextRefresh = Date().addingTimeInterval(interval)
    }

    /// An expiring policy stops applying at its expiry, and the default takes over. The timer runs
    /// on the wall clock (it counts time the device slept); a far expiry is checked again yearly.
    private func scheduleExpiry(_ policy: Policy) {
        expiryTimer?.cancel()
        guard let expiry = policy.expiresAt, !closed else { return }
        let seconds = min(max(0, expiry.timeIntervalSinceNow), 366 * 86_400)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(wallDeadline: .now() + .milliseconds(Int(seconds * 1_000)), leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.expire(policy) }
        timer.resume()
        expiryTimer = timer
    }

    private func expire(_ policy: Policy) {
        guard let current, current.policy == policy, let expiry = policy.expiresAt else { return }
        guard expiry <= Date() else { return scheduleExpiry(policy) }  // not yet (a far expiry, or an early timer)
        self.current = nil
        apply(nil)
        status.source = fallbackSource
        status.etag = nil
        (status.lastError, status.lastFetchError) = (.expired(expiry), nil)
        logger.warning("the policy expired; the default applies until a new one arrives")
    }
}
