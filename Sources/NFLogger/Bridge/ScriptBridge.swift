public import Foundation

/// Lets web content inside the app log through this logger: it takes one message that
/// `nflogger.js` posted from a page (docs/BRIDGE.md), checks it, makes the same call a native
/// caller would (so names, parameters, modes, policy rules, sampling, privacy zones, consent and
/// aggregation apply unchanged), and answers with the reply the page's Promise resolves to.
///
/// Platform-independent: an adaptor hands it messages. On Apple platforms that is a
/// `WKScriptMessageHandlerWithReply` (see `WebKitBridge.swift`, built only where WebKit exists);
/// anywhere else, any channel that knows which page posted the message.
///
/// It never throws into the app and never blocks the calling thread: the reply comes on the
/// logger's completion queue once the call is settled. A message from an origin not in
/// ``Configuration/WebBridge/allowedOrigins``, a malformed or unknown one, or one past the
/// page's rate stores nothing and gets an error reply naming the problem.
public final class ScriptBridge: Sendable {
    /// The largest message accepted, in bytes of JSON.
    public static let maxMessageBytes = 64 * 1024
    /// Spans and transactions a page may have open through one bridge; past it the oldest are
    /// forgotten (their end then completes `unknownSpan`).
    static let maxOpen = 1_000

    private let logger: NFLogger
    private let allowed: Set<String>
    private let settings: Configuration.WebBridge
    private let state = Lock(State())

    private struct State {
        /// Token buckets per origin: (tokens, last refill in monotonic nanoseconds).
        var buckets: [String: (tokens: Double, at: UInt64)] = [:]
        /// What pages started here, by id, oldest first: only these can be ended by a page.
        var spans: [UUID: String] = [:]
        var transactions: [UUID: (handle: TransactionHandle, origin: String)] = [:]
        var order: [UUID] = []
    }

    /// A bridge into `logger`, with its configuration's ``Configuration/webBridge``.
    public init(logger: NFLogger) {
        self.logger = logger
        settings = logger.configuration.webBridge
        allowed = Set(settings.allowedOrigins.compactMap(Self.normalize))
    }

    /// The script an app injects at document start into the pages it allows: `nflogger.js`.
    public static var script: String {
        get throws {
            guard let url = Bundle.module.url(forResource: "nflogger", withExtension: "js") else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "nflogger.js is not in the package's resources"])
            }
            return try String(contentsOf: url, encoding: .utf8)
        }
    }

    /// Handles one message posted by a frame whose origin is `origin`; `reply` is called exactly
    /// once, on the completion queue, with the JSON reply (docs/BRIDGE.md).
    public func handle(message: Data, origin: String, reply: @escaping @Sendable (Data) -> Void) {
        let respond: @Sendable (BridgeReply) -> Void = { reply($0.json) }
        var id: Int64?
        do throws(BridgeFailure) {
            guard message.count <= Self.maxMessageBytes else {
                throw .malformed("the message is \(message.count) bytes; at most \(Self.maxMessageBytes)")
            }
            guard let object = (try? JSONSerialization.jsonObject(with: message)) as? [String: Any] else {
                throw .malformed("the message is not a JSON object")
            }
            id = (object["id"] as? NSNumber).flatMap { Int64(exactly: $0.doubleValue) }
            guard let normalized = Self.normalize(origin), allowed.contains(normalized) else {
                throw .originNotAllowed(origin)
            }
            guard admit(normalized) else { throw .rateLimited }
            let parsed = try BridgeMessage(object)
            perform(parsed, origin: normalized, respond: respond)
        } catch {
            let answer = BridgeReply(id: id, failure: error)
            logger.completions.queue.async { respond(answer) }
        }
    }

    /// Handles one message and waits for its reply.
    nonisolated(nonsending)
    public func handle(message: Data, origin: String) async -> Data {
        await withCheckedContinuation { continuation in
            handle(message: message, origin: origin) { continuation.resume(returning: $0) }
        }
    }

    // MARK: The calls

    private func perform(_ message: BridgeMessage, origin: String, respond: @escaping @Sendable (BridgeReply) -> Void) {
        let id = message.id
        let answer: LogCompletion = { status in respond(BridgeReply(id: id, status: status)) }
        switch message.call {
        case .logEvent(let name, let type, let parameters, let transaction):
            var context: TransactionContext?
            if let transaction {
                guard let found = self.context(transaction, origin: origin) else { return answer(.failed(.unknownSpan(transaction))) }
                context = found
            }
            logger.logFromPage(name: name, type: type, parameters: parameters, context: context, origin: origin, completion: answer)
        case .startEvent(let name, let type, let parameters, let transaction):
            var context: TransactionContext?
            if let transaction {
                guard let found = self.context(transaction, origin: origin) else { return answer(.failed(.unknownSpan(transaction))) }
                context = found
            }
            let span = logger.startSpan(name: name, type: type, parameters: parameters, context: context,
                                        beginsTransaction: false, webOrigin: origin, completion: answer)
            remember(span: span.id, origin: origin)
        case .endEvent(let span, let parameters):
            guard state.withLock({ $0.spans[span] == origin }) else { return answer(.failed(.unknownSpan(span))) }
            state.withLock { $0.spans[span] = nil }
            logger.endEvent(id: span, parameters: parameters, completion: answer)
        case .beginTransaction(let name, let type, let parameters):
            let span = logger.startSpan(name: name, type: type, parameters: parameters, context: nil,
                                        beginsTransaction: true, webOrigin: origin, completion: answer)
            remember(transaction: TransactionHandle(span: span), origin: origin)
        case .endTransaction(let transaction, let outcome):
            let handle = state.withLock { state -> TransactionHandle? in
                guard let entry = state.transactions[transaction], entry.origin == origin else { return nil }
                state.transactions[transaction] = nil
                return entry.handle
            }
            guard let handle else { return answer(.failed(.unknownSpan(transaction))) }
            handle.end(outcome: outcome, completion: answer)
        case .flush:
            logger.flush { result in respond(BridgeReply(id: id, flushed: result)) }
        }
    }

    /// A transaction the page began here (and only here: a page cannot log into the app's own).
    private func context(_ transaction: UUID, origin: String) -> TransactionContext? {
        state.withLock { state in
            guard let entry = state.transactions[transaction], entry.origin == origin else { return nil }
            return entry.handle.context
        }
    }

    private func remember(span: UUID, origin: String) {
        state.withLock { state in
            state.spans[span] = origin
            state.order.append(span)
            Self.trim(&state)
        }
    }

    private func remember(transaction: TransactionHandle, origin: String) {
        state.withLock { state in
            state.transactions[transaction.id] = (transaction, origin)
            state.order.append(transaction.id)
            Self.trim(&state)
        }
    }

    private static func trim(_ state: inout State) {
        while state.order.count > maxOpen {
            let oldest = state.order.removeFirst()
            state.spans[oldest] = nil
            state.transactions[oldest] = nil
        }
    }

    // MARK: Origins and rate

    /// `scheme://host[:port]`, lowercase, without the scheme's default port; `nil` for anything
    /// that is not an http(s) origin.
    static func normalize(_ origin: String) -> String? {
        guard let components = URLComponents(string: origin), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host?.lowercased(), !host.isEmpty,
              components.path.isEmpty || components.path == "/", components.query == nil, components.user == nil else { return nil }
        // As the collector accepts origins (docs/PROTOCOL.md): an ASCII host (browsers give
        // international names in punycode) or a bracketed IPv6 address.
        let hostText: String
        if host.contains(":") {
            let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard bare.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            hostText = "[\(bare)]"
        } else {
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }) else { return nil }
            hostText = host
        }
        let port = components.port.flatMap { ($0 == 80 && scheme == "http") || ($0 == 443 && scheme == "https") ? nil : $0 }
        guard port.map({ (1...65_535).contains($0) }) ?? true else { return nil }
        return "\(scheme)://\(hostText)" + (port.map { ":\($0)" } ?? "")
    }

    /// A token from the origin's bucket, if it has one; a refusal is counted.
    private func admit(_ origin: String) -> Bool {
        let now = logger.clock.monotonicNanoseconds()
        let admitted = state.withLock { state -> Bool in
            var bucket = state.buckets[origin] ?? (settings.burst, now)
            let elapsed = Double(now &- bucket.at) / 1e9
            bucket = (min(settings.burst, bucket.tokens + elapsed * settings.messagesPerSecond), now)
            defer { state.buckets[origin] = bucket }
            guard bucket.tokens >= 1 else { return false }
            bucket.tokens -= 1
            return true
        }
        if !admitted { logger.bridgeDrops.withLock { $0 += 1 } }
        return admitted
    }
}
