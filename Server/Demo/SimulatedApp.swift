import Foundation
import NFLogger
@_spi(NFLogShared) import NFLogSupport

/// A user of a shopping app, simulated with a fixed seed: foreground periods that start (launch
/// or foreground) and end (background), each a new session unless it follows a short absence; screens viewed as spans; taps and scrolls as point events;
/// network calls as spans with log-normal round trips; three use cases as transactions that call
/// the app's backend over real HTTP (log in, a sign-up form some users abandon part way, a
/// checkout). A few events the policy filters out (debug traces it denies, scrolls it samples)
/// or folds (frame timings it aggregates per screen). Waits are real but short (milliseconds),
/// so the SDK measures real durations.
struct SimulatedApp {
    let logger: NFLogger
    let tally: Tally
    let status: StatusLine
    let sessions: Int
    let targetCalls: Int
    /// The app's backend: its requests carry the transaction (`traceparent`).
    let backend: URL
    let http: any HTTPTransport
    /// The help screen: web content logging through the bridge.
    var help: HelpPage
    var random: SeededRandom
    private(set) var calls = 0
    /// The SDK's sessions the foreground periods fell into (``NFLogger/sessionID``).
    private(set) var sessionIDs: Set<UUID> = []
    /// How long the SDK waits in the background before the next foreground starts a new session
    /// (`Configuration.sessionIdleTimeout`): a long absence is longer, a short one no wait at all,
    /// so which absences start a session does not depend on how busy the machine is.
    static let sessionIdleTimeout: TimeInterval = 0.25

    init(logger: NFLogger, tally: Tally, status: StatusLine, sessions: Int, targetCalls: Int, seed: UInt64,
         backend: URL, http: any HTTPTransport) {
        self.logger = logger
        self.tally = tally
        self.status = status
        self.sessions = sessions
        self.targetCalls = targetCalls
        self.backend = backend
        self.http = http
        help = HelpPage(bridge: ScriptBridge(logger: logger), tally: tally)
        random = SeededRandom(seed: seed)
    }

    static let screens = ["home", "search", "product", "cart", "profile", "settings"]
    static let buttons = ["buy", "back", "share", "like", "filter", "menu"]

    private mutating func log(_ name: String, type: String = "event", _ parameters: LogParameters = [:]) {
        logger.logEvent(name: name, type: type, parameters: parameters, completion: tally.completion)
        calls += 1
    }

    private mutating func start(_ name: String, type: String, _ parameters: LogParameters = [:]) -> SpanHandle {
        calls += 1
        return logger.startEvent(name: name, type: type, parameters: parameters, completion: tally.completion)
    }

    private mutating func end(_ span: SpanHandle, _ parameters: LogParameters = [:]) {
        span.end(parameters: parameters, completion: tally.completion)
        calls += 1
    }

    private mutating func wait(milliseconds: Double) async {
        try? await Task.sleep(for: .microseconds(Int(milliseconds * 1_000)))
    }

    mutating func run() async {
        let perSession = max(12, targetCalls / max(1, sessions))
        for session in 0..<sessions {
            status.update(phase: "session \(session + 1)/\(sessions)", done: calls, total: targetCalls)
            let budgetEnd = calls + perSession
            if session == 0 {
                log("app.launch", type: "lifecycle", ["cold": true])
                await logIn()
            } else {
                logger.resume()
                log("app.foreground", type: "lifecycle")
            }
            sessionIDs.insert(logger.sessionID)
            let visits = Int.random(in: 2...5, using: &random)
            for visit in 0..<visits {
                await screen(named: Self.screens.randomElement(using: &random) ?? "home",
                             taps: max(1, (budgetEnd - calls - 12) / max(1, visits - visit)))
                status.update(phase: "session \(session + 1)/\(sessions)", done: calls, total: targetCalls)
            }
            if random.chance(0.5) { await helpScreen() }
            if random.chance(0.7) { await signUpForm() }
            if random.chance(0.4) { await checkout() }
            log("app.background", type: "lifecycle")
            logger.suspend()
            // A long absence starts a new session at the next foreground, a short one does not.
            if random.chance(0.75) { await wait(milliseconds: Self.sessionIdleTimeout * 1_000 + 30) }
        }
        logger.resume()  // back in the foreground, so the last uploads can go
        status.update(phase: "logged", done: targetCalls, total: targetCalls)
    }

    private mutating func screen(named name: String, taps: Int) async {
        let span = start("screen.\(name)", type: "screen", ["from": "nav"])
        for _ in 0..<taps {
            let roll = Double.random(in: 0..<1, using: &random)
            if roll < 0.80 {
                log("ui.tap", type: "interaction", ["screen": name, "button": Self.buttons.randomElement(using: &random) ?? "menu"])
            } else if roll < 0.88 {
                log("ui.scroll", type: "interaction", ["screen": name, "offset": Int.random(in: 0...4_000, using: &random)])
            } else if roll < 0.95 {
                // Aggregated by the default policy: one row per screen and minute, with percentiles.
                log("perf.frame", type: "performance", ["ms": random.logNormal(median: 9, spread: 0.4), "screen": name])
            } else {
                log("debug.trace", ["screen": name, "note": "layout pass"])  // the default policy denies these
            }
        }
        if random.chance(0.6) { await networkCall(path: "/api/\(name)") }
        await wait(milliseconds: Double.random(in: 2...12, using: &random))
        end(span)
    }

    private mutating func networkCall(path: String) async {
        let call = start("net.request", type: "network", ["method": "GET", "path": path])
        let roundTrip = min(400, random.logNormal(median: 28, spread: 0.55))
        await wait(milliseconds: roundTrip)
        end(call, ["status": random.chance(0.96) ? 200 : 503, "bytes": Int.random(in: 300...40_000, using: &random)])
    }

    /// The help screen: a web page whose events come through the bridge, as `nflogger.js` would
    /// send them (a view, an article read as a span, a tap).
    private mutating func helpScreen() async {
        let topic = ["refunds", "shipping", "account"].randomElement(using: &random) ?? "refunds"
        await help.post(["call": "logEvent", "name": "help.view", "parameters": ["topic": topic]])
        let article = await help.post(["call": "startEvent", "name": "help.article", "parameters": ["topic": topic]])
        await wait(milliseconds: random.logNormal(median: 20, spread: 0.5))
        await help.post(["call": "logEvent", "name": "help.tap", "parameters": ["link": "contact"]])
        if let article { await help.post(["call": "endEvent", "span": article, "parameters": ["scrolled": 0.8]]) }
        calls += article == nil ? 3 : 4
    }

    // MARK: Use cases: transactions that reach the backend

    private mutating func begin(_ name: String, _ parameters: LogParameters = [:]) -> TransactionHandle {
        calls += 1
        return logger.beginTransaction(name: name, parameters: parameters, completion: tally.completion)
    }

    private mutating func end(_ transaction: TransactionHandle, _ outcome: TransactionOutcome, _ parameters: LogParameters = [:]) {
        transaction.end(outcome: outcome, parameters: parameters, completion: tally.completion)
        calls += 1
    }

    /// A request to the backend inside a transaction: a `net.request` span whose `traceparent`
    /// lets the backend log into the same transaction under it.
    private mutating func call(_ path: String, in transaction: TransactionHandle) async -> Bool {
        let url = backend.appendingPathComponent(String(path.dropFirst()))
        let span = transaction.startEvent(name: "net.request", type: "network", parameters: ["method": "POST", "path": path],
                                          completion: tally.completion)
        calls += 1
        let status = (try? await http.send(TransportRequest(url: url, method: "POST",
                                                             headers: span.propagationHeaders(for: url), body: Data())))?.status ?? 0
        end(span, ["status": status])
        return status == 200
    }

    /// Logging in: the first use case of a launch.
    private mutating func logIn() async {
        let login = begin("flow.login")
        await wait(milliseconds: random.logNormal(median: 25, spread: 0.4))  // typing
        end(login, await call("/api/login", in: login) ? .completed : .failed(reason: "the backend refused"))
    }

    /// A sign-up form: a use case some users give up part way.
    private mutating func signUpForm() async {
        let form = begin("form.signup", ["variant": random.chance(0.5) ? "A" : "B"])
        let fields = ["email", "password", "name", "country", "birthday"].prefix(Int.random(in: 3...5, using: &random))
        for (step, field) in fields.enumerated() {
            await wait(milliseconds: random.logNormal(median: 35, spread: 0.5))
            if random.chance(0.08) {
                end(form, .cancelled(reason: "left the form"), ["step": step])
                return
            }
            form.logEvent(name: "form.field", type: "interaction", parameters: ["field": field, "step": step], completion: tally.completion)
            calls += 1
        }
        end(form, await call("/api/signup", in: form) ? .completed : .failed(reason: "the backend refused"))
    }

    /// A checkout flow: another use case, abandoned at the payment step by some.
    private mutating func checkout() async {
        let flow = begin("flow.checkout", ["items": Int.random(in: 1...6, using: &random)])
        await screen(named: "cart", taps: 2)
        await wait(milliseconds: random.logNormal(median: 40, spread: 0.4))
        if random.chance(0.2) {
            end(flow, .cancelled(reason: "left at payment"), ["step": "payment"])
            return
        }
        end(flow, await call("/api/order", in: flow) ? .completed : .failed(reason: "the backend refused"))
    }
}
