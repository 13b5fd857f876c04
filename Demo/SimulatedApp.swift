import Foundation
import NFLogger

/// A user of a shopping app, simulated with a fixed seed: sessions that start (launch or
/// foreground) and end (background); screens viewed as spans; taps and scrolls as point events;
/// network calls as spans with log-normal round trips; a sign-up form some users abandon part
/// way; a checkout flow. A few events the policy filters out (debug traces it denies, scrolls it
/// samples) or folds (frame timings it aggregates per screen). Waits are real but short (milliseconds), so the SDK measures real durations.
struct SimulatedApp {
    let logger: NFLogger
    let tally: Tally
    let status: StatusLine
    let sessions: Int
    let targetCalls: Int
    var random: SeededRandom
    private(set) var calls = 0

    init(logger: NFLogger, tally: Tally, status: StatusLine, sessions: Int, targetCalls: Int, seed: UInt64) {
        self.logger = logger
        self.tally = tally
        self.status = status
        self.sessions = sessions
        self.targetCalls = targetCalls
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
            } else {
                logger.resume()
                log("app.foreground", type: "lifecycle")
            }
            let visits = Int.random(in: 2...5, using: &random)
            for visit in 0..<visits {
                await screen(named: Self.screens.randomElement(using: &random) ?? "home",
                             taps: max(1, (budgetEnd - calls - 12) / max(1, visits - visit)))
                status.update(phase: "session \(session + 1)/\(sessions)", done: calls, total: targetCalls)
            }
            if random.chance(0.7) { await signUpForm() }
            if random.chance(0.4) { await checkout() }
            log("app.background", type: "lifecycle")
            logger.suspend()
            // A long absence starts a new session at the next foreground, a short one does not.
            await wait(milliseconds: random.chance(0.75) ? 80 : 15)
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

    /// A sign-up form: a use case some users give up part way.
    private mutating func signUpForm() async {
        let form = start("form.signup", type: "usecase", ["variant": random.chance(0.5) ? "A" : "B"])
        let fields = ["email", "password", "name", "country", "birthday"].prefix(Int.random(in: 3...5, using: &random))
        for (step, field) in fields.enumerated() {
            await wait(milliseconds: random.logNormal(median: 35, spread: 0.5))
            if random.chance(0.08) {
                end(form, ["completed": false, "step": step])
                return
            }
            log("form.field", type: "interaction", ["field": field, "step": step])
        }
        await networkCall(path: "/api/signup")
        end(form, ["completed": true])
    }

    /// A checkout flow: another use case, abandoned at the payment step by some.
    private mutating func checkout() async {
        let flow = start("flow.checkout", type: "usecase", ["items": Int.random(in: 1...6, using: &random)])
        await screen(named: "cart", taps: 2)
        await wait(milliseconds: random.logNormal(median: 40, spread: 0.4))
        if random.chance(0.2) {
            end(flow, ["completed": false, "step": "payment"])
            return
        }
        await networkCall(path: "/api/order")
        end(flow, ["completed": true])
    }
}
