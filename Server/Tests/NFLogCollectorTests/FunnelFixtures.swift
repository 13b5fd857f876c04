import Foundation
@testable import NFLogCollector
@_spi(NFLogShared) import NFLogSupport

/// Batches whose use cases are transactions that log steps and are abandoned at different steps,
/// in two app versions and two hours, and the funnels worked out by hand from them.
///
/// `checkout` runs (each a use case span whose uuid is its transaction; steps are points or spans
/// logged with that transaction and the run's span id as parent, by the same app instance):
///
/// | run | version | hour | outcome         | steps (device time offset)            | last step     |
/// |-----|---------|------|-----------------|---------------------------------------|---------------|
/// | R1  | 2.1.0   | 0    | completed       | cart +1, address +2, pay +3 (a span)   | —             |
/// | R2  | 2.1.0   | 0    | completed false | cart +1, address +2                    | address       |
/// | R3  | 2.1.0   | 0    | abandoned (SDK) | cart +1                                | cart          |
/// | R4  | 2.1.0   | 1    | completed false | none                                   | before first  |
/// | R5  | 2.1.0   | 1    | completed false | address +3, cart +5                    | cart (latest) |
/// | R6  | 2.0     | 1    | completed       | cart +1, cart +2 (reached once)        | —             |
/// | R7  | 2.0     | 1    | completed false | pay +4, address +4 (a tie)             | pay (greater) |
///
/// Not steps: the backend's server span under R1's span (another context), a point logged under
/// R1's pay span (its parent is the step, not the run), and a point of R3's transaction without a
/// parent span. `signup` runs log no steps at all (no transaction). The backend's batch has app
/// version 2.1.0 and SDK version 0.2.0.
///
/// Events: 17 in the app's 2.1.0 batch, 6 in its 2.0 batch, 1 from the backend (24; 11 spans, of
/// which R3 abandoned by the SDK). Hour 0 holds 13 of them, hour 1 the other 11.
enum FunnelFixtures {
    static let t0: Int64 = 1_750_000_000_000
    static let hour: Int64 = 3_600_000
    static let appSession = "0193a7c2-0000-7000-8000-0000000000c1"
    static let oldSession = "0193a7c2-0000-7000-8000-0000000000c2"
    static let backendSession = "0193a7c2-0000-7000-8000-0000000000c3"

    /// A use case's run: its uuid (the transaction id) and W3C span id.
    struct Run {
        let uuid = UUID().uuidString.lowercased()
        var spanID: String { UUID(uuidString: uuid).flatMap { SpanID(spanUUID: $0) }?.description ?? "" }
    }

    enum Outcome {
        case completed, failed, abandoned
    }

    static func span(_ uuid: String, name: String, type: String, at: Int64, duration: Double, session: String,
                     transaction: String? = nil, parent: String? = nil, outcome: Outcome = .completed) -> String {
        var text = #"{"uuid":"\#(uuid)","session":"\#(session)","name":"\#(name)","kind":"span","type":"\#(type)","timestamp":\#(at),"start":\#(at),"end":\#(at + Int64(duration)),"duration_ms":\#(duration)"#
        if let transaction { text += #","transaction":"\#(transaction)""# }
        if let parent { text += #","parent_span":"\#(parent)""# }
        switch outcome {
        case .completed: text += #","end_parameters":{"outcome":"completed","completed":true}"#
        case .failed: text += #","end_parameters":{"outcome":"cancelled","completed":false}"#
        case .abandoned: text += #","abandoned":true"#
        }
        return text + "}"
    }

    /// A run of `name` starting at `at`, its transaction its own uuid.
    static func run(_ run: Run, _ name: String, at: Int64, duration: Double, outcome: Outcome, session: String = appSession) -> String {
        span(run.uuid, name: name, type: "usecase", at: at, duration: duration, session: session, transaction: run.uuid,
             outcome: outcome)
    }

    /// A step of `run`: a point logged through its transaction handle.
    static func step(_ name: String, of run: Run, at: Int64, session: String = appSession) -> String {
        #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"\#(name)","kind":"point","type":"step","timestamp":\#(at),"transaction":"\#(run.uuid)","parent_span":"\#(run.spanID)"}"#
    }

    static func batch(version: String, appID: String = "com.example.shop", os: String = "iOS", sdk: String = "0.1.0",
                      sessions: [(String, Int64, Int64?)], events: [String]) -> String {
        let sessionsJSON = sessions.map { id, start, end in
            #"{"id":"\#(id)","started_at":\#(start)\#(end.map { #","ended_at":\#($0)"# } ?? "")}"#
        }
        return """
            {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":\(t0 + 2 * hour),"sdk":{"name":"NFLogger","version":"\(sdk)"},
             "context":{"app_id":"\(appID)","app_version":"\(version)","os_name":"\(os)","os_version":"1","locale":"en_GB",
                        "sessions":[\(sessionsJSON.joined(separator: ","))]},
             "events":[\(events.joined(separator: ","))]}
            """
    }

    /// The app's batches (version 2.1.0 and 2.0) and its backend's, as JSON.
    static func batches() -> [String] {
        let r = (1...7).map { _ in Run() }
        let h1 = t0 + hour
        var current: [String] = [
            run(r[0], "checkout", at: t0, duration: 1_000.5, outcome: .completed),
            step("checkout.cart", of: r[0], at: t0 + 1), step("checkout.address", of: r[0], at: t0 + 2),
            run(r[1], "checkout", at: t0 + 10, duration: 400.25, outcome: .failed),
            step("checkout.cart", of: r[1], at: t0 + 11), step("checkout.address", of: r[1], at: t0 + 12),
            run(r[2], "checkout", at: t0 + 20, duration: 30, outcome: .abandoned),
            step("checkout.cart", of: r[2], at: t0 + 21),
            run(r[3], "checkout", at: h1, duration: 12.5, outcome: .failed),
            run(r[4], "checkout", at: h1 + 10, duration: 77.75, outcome: .failed),
            step("checkout.address", of: r[4], at: h1 + 13), step("checkout.cart", of: r[4], at: h1 + 15),
            // signup: no transaction, so no steps; one completed, one given up in each hour.
            span(UUID().uuidString.lowercased(), name: "signup", type: "usecase", at: t0 + 30, duration: 2_000, session: appSession),
            span(UUID().uuidString.lowercased(), name: "signup", type: "usecase", at: h1 + 30, duration: 900, session: appSession,
                 outcome: .failed),
            // A point of R3's transaction without a parent span: not a step.
            #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(appSession)","name":"checkout.note","kind":"point","type":"event","timestamp":\#(t0 + 22),"transaction":"\#(r[2].uuid)"}"#,
        ]
        // R1's pay step is a span; a point logged under it has the step, not the run, as parent.
        let pay = Run()
        current.append(span(pay.uuid, name: "checkout.pay", type: "step", at: t0 + 3, duration: 500, session: appSession,
                            transaction: r[0].uuid, parent: r[0].spanID))
        current.append(#"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(appSession)","name":"checkout.card","kind":"point","type":"step","timestamp":\#(t0 + 4),"transaction":"\#(r[0].uuid)","parent_span":"\#(pay.spanID)"}"#)
        let old: [String] = [
            run(r[5], "checkout", at: h1 + 20, duration: 250, outcome: .completed, session: oldSession),
            step("checkout.cart", of: r[5], at: h1 + 21, session: oldSession), step("checkout.cart", of: r[5], at: h1 + 22, session: oldSession),
            run(r[6], "checkout", at: h1 + 30, duration: 60, outcome: .failed, session: oldSession),
            step("checkout.pay", of: r[6], at: h1 + 34, session: oldSession),
            step("checkout.address", of: r[6], at: h1 + 34, session: oldSession),
        ]
        // The backend continues R1 straight under its span: another context, so not a step.
        let backend = [span(UUID().uuidString.lowercased(), name: "http.server", type: "server", at: t0 + 5, duration: 200,
                            session: backendSession, transaction: r[0].uuid, parent: r[0].spanID)]
        return [
            batch(version: "2.1.0", sessions: [(appSession, t0 - 1_000, t0 + 5 * 60_000)], events: current),
            batch(version: "2.0", sessions: [(oldSession, h1 + 5, h1 + 65_000)], events: old),
            batch(version: "2.1.0", appID: "com.example.shop.api", os: "Linux", sdk: "0.2.0",
                  sessions: [(backendSession, t0 - 5_000, nil)], events: backend),
        ]
    }

    static func decoded() throws -> [Batch] {
        try batches().map { try BatchDecoder().decode(Array($0.utf8)) }
    }

    /// More step names than a use case lists (50): 52 names, each reached once by one run, the
    /// first two twice; ties broken by name in byte order.
    static func manySteps() throws -> [Batch] {
        let run = Run()
        var events = [Self.run(run, "wizard", at: t0, duration: 10, outcome: .failed)]
        for i in 0..<52 { events.append(step(String(format: "wizard.step%02d", 51 - i), of: run, at: t0 + Int64(i))) }
        let again = Run()
        events.append(Self.run(again, "wizard", at: t0 + 100, duration: 10, outcome: .completed))
        events += ["wizard.step50", "wizard.step51"].map { step($0, of: again, at: t0 + 101) }
        return [try BatchDecoder().decode(Array(batch(version: "3.0", sessions: [(appSession, t0, t0 + 1_000)], events: events).utf8))]
    }
}
