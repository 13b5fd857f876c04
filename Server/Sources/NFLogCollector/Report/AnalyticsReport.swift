import Foundation

/// The analysis the source documents motivate, computed from stored events: how long use cases
/// take (a sign-up form's fill time), how often they are abandoned, network round trips, session
/// durations; plus what was stored and what devices had to drop.
///
/// Conventions the report reads (the SDK's demo follows them; an app can too):
/// - a **use case** is a span of type `usecase` (`form.signup`, `flow.checkout`); it is
///   **abandoned** when the SDK closed it itself (`abandoned`: the app died or it timed out) or the
///   app ended it with `"completed": false` in its end parameters; its time is the duration of the
///   completed ones;
/// - a **network call** is a span of type `network`; its round trip is its duration;
/// - a **session** lasts from its start to the last time the app went to the background;
/// - a use case's **server split** (``UseCase/server``) divides its completed transactions' time
///   between the app, the network and the backend, from the spans the backend logged under the
///   transaction (docs/PROTOCOL.md, "Transactions").
///
/// At most 1,000 use cases are listed: the most started ones, ties broken by name. The others are
/// left out of ``useCases`` (an app that makes a use-case name per user would otherwise grow the
/// report without bound) and counted in ``useCasesOmitted``.
///
/// Aggregates (events the devices folded into one record per name and window) are summarised by
/// name in ``aggregates``: at most 1,000 names, those with the most events first (ties broken by
/// name), the others counted in ``aggregatesOmitted``.
///
/// A ``ReportFilter`` (echoed in ``filter``) narrows the report: a time range and an app version
/// select the events, spans, sessions and aggregates counted everywhere, and a dimension the
/// aggregates. With a time range or an app version set, ``eventsStored``, ``eventsByName``,
/// ``pointEvents``, ``spanEvents``, ``eventsBySource`` and ``abandonedSpans`` count the matching
/// events rather than the app's running totals; ``duplicatesDropped``, ``batches``,
/// ``prunedOnDevices``, ``databaseResets`` and ``quarantinedOnDevices`` stay the app's.
///
/// Each use case has a funnel (``UseCase/steps``): the events logged against its runs, how many
/// runs reached each, and where the abandoned ones left. ``versions`` counts the events by app
/// and SDK version.
///
/// ``eventsBySource`` splits the stored events by where they were logged: the app's own code or
/// web content through the SDK's web bridge; ``webOrigins`` counts the web pages' distinct origins.
public struct AnalyticsReport: Sendable, Equatable, Codable {
    public let app: String
    public let eventsStored: Int
    public let duplicatesDropped: Int
    public let batches: Int
    public let eventsByName: [String: Int]
    public let pointEvents: Int
    public let spanEvents: Int
    public let useCases: [String: UseCase]
    /// Use-case names stored but not listed in ``useCases`` (past the 1,000 most started).
    public let useCasesOmitted: Int
    public let network: DurationSummary
    public let sessions: DurationSummary
    public let abandonedSpans: Int
    public let prunedOnDevices: Int
    public let databaseResets: Int
    /// Events this collector refused for good that devices reported quarantining.
    public let quarantinedOnDevices: Int
    /// By aggregated event name: the records, the events they fold, each measure merged.
    public let aggregates: [String: AggregateSummary]
    /// Aggregated names stored (within the filter) but not listed in ``aggregates``.
    public let aggregatesOmitted: Int
    /// The stored events by source: native (the app's code) and web (web content, through the
    /// web bridge). They add up to ``eventsStored``, as ``pointEvents`` and ``spanEvents`` do.
    public let eventsBySource: EventsBySource
    /// The distinct origins of the stored web events (those that carried one).
    public let webOrigins: Int
    /// The filter the report applied (every part unset: the whole store).
    public let filter: ReportFilter
    /// The events by app version and by SDK version (within the filter).
    public let versions: VersionCounts

    /// Two counts, whatever the number of events or origins.
    public struct EventsBySource: Sendable, Equatable, Codable {
        public let native: Int
        public let web: Int

        public init(native: Int, web: Int) {
            self.native = native
            self.web = web
        }
    }

    public struct UseCase: Sendable, Equatable, Codable {
        public let started: Int
        public let completed: Int
        public let abandoned: Int
        /// abandoned ÷ started.
        public let abandonmentRate: Double
        /// Durations of the completed ones.
        public let duration: DurationSummary
        /// The completed transactions' time in the app, on the network and on the server, over
        /// those whose app called a backend that logged under the transaction; `nil` (the key
        /// absent) when none did.
        public let server: ServerSplit?
        /// The funnel: the steps logged against the runs, at most ``maxSteps``, the most reached
        /// first (ties by name, in byte order).
        public let steps: [UseCaseStep]
        /// Step names logged against the runs but not listed in ``steps``.
        public let stepsOmitted: Int
        /// Abandoned runs that logged no step at all. With ``UseCaseStep/left`` summed over every
        /// step (listed or not), it adds up to ``abandoned``.
        public let leftBeforeFirstStep: Int

        /// How many steps a use case lists.
        public static let maxSteps = 50

        /// `leftBeforeFirstStep` defaults to `abandoned`: without steps, every abandoned run left
        /// before a first one.
        public init(started: Int, completed: Int, abandoned: Int, abandonmentRate: Double, duration: DurationSummary,
                    server: ServerSplit? = nil, steps: [UseCaseStep] = [], stepsOmitted: Int = 0, leftBeforeFirstStep: Int? = nil) {
            self.started = started
            self.completed = completed
            self.abandoned = abandoned
            self.abandonmentRate = abandonmentRate
            self.duration = duration
            self.server = server
            self.steps = steps
            self.stepsOmitted = stepsOmitted
            self.leftBeforeFirstStep = leftBeforeFirstStep ?? abandoned
        }

        enum CodingKeys: String, CodingKey {
            case started, completed, abandoned, duration, server, steps
            case abandonmentRate = "abandonment_rate"
            case stepsOmitted = "steps_omitted"
            case leftBeforeFirstStep = "left_before_first_step"
        }

        /// Reads a use case without a funnel (a report written before funnels) as one without
        /// steps.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let abandoned = try c.decode(Int.self, forKey: .abandoned)
            self.init(started: try c.decode(Int.self, forKey: .started), completed: try c.decode(Int.self, forKey: .completed),
                      abandoned: abandoned, abandonmentRate: try c.decode(Double.self, forKey: .abandonmentRate),
                      duration: try c.decode(DurationSummary.self, forKey: .duration),
                      server: try c.decodeIfPresent(ServerSplit.self, forKey: .server),
                      steps: try c.decodeIfPresent([UseCaseStep].self, forKey: .steps) ?? [],
                      stepsOmitted: try c.decodeIfPresent(Int.self, forKey: .stepsOmitted) ?? 0,
                      leftBeforeFirstStep: try c.decodeIfPresent(Int.self, forKey: .leftBeforeFirstStep))
        }

        /// The step most abandoned runs left at (the first listed among equals), if any did.
        var topLeavingStep: UseCaseStep? {
            steps.reduce(nil) { best, step in step.left > (best?.left ?? 0) ? step : best }
        }
    }

    enum CodingKeys: String, CodingKey {
        case app, batches, network, sessions
        case eventsStored = "events_stored"
        case duplicatesDropped = "duplicates_dropped"
        case eventsByName = "events_by_name"
        case pointEvents = "point_events"
        case spanEvents = "span_events"
        case useCases = "use_cases"
        case useCasesOmitted = "use_cases_omitted"
        case abandonedSpans = "abandoned_spans"
        case prunedOnDevices = "pruned_on_devices"
        case databaseResets = "database_resets"
        case quarantinedOnDevices = "quarantined_on_devices"
        case aggregates
        case aggregatesOmitted = "aggregates_omitted"
        case eventsBySource = "events_by_source"
        case webOrigins = "web_origins"
        case filter, versions
    }

    public init(app: String, stats: CollectorStats, pointEvents: Int, spanEvents: Int, useCases: [String: UseCase],
                network: DurationSummary, sessions: DurationSummary, useCasesOmitted: Int = 0,
                aggregates: [String: AggregateSummary] = [:], aggregatesOmitted: Int = 0,
                eventsBySource: EventsBySource? = nil, webOrigins: Int = 0, filter: ReportFilter = ReportFilter(),
                versions: VersionCounts = VersionCounts()) {
        self.app = app
        eventsStored = stats.eventsStored
        duplicatesDropped = stats.duplicatesDropped
        batches = stats.batches
        eventsByName = stats.eventsByName
        self.pointEvents = pointEvents
        self.spanEvents = spanEvents
        self.useCases = useCases
        self.useCasesOmitted = useCasesOmitted
        self.network = network
        self.sessions = sessions
        abandonedSpans = stats.abandonedSpans
        prunedOnDevices = stats.prunedOnDevices
        databaseResets = stats.databaseResets
        quarantinedOnDevices = stats.quarantinedOnDevices
        self.aggregates = aggregates
        self.aggregatesOmitted = aggregatesOmitted
        self.eventsBySource = eventsBySource ?? EventsBySource(native: stats.eventsKept, web: 0)
        self.webOrigins = webOrigins
        self.filter = filter
        self.versions = versions
    }

    /// Reads `use_cases_omitted`, `aggregates_omitted` and `web_origins` as 0, `aggregates` as
    /// empty, `events_by_source` as every event native, `filter` as none and `versions` as empty
    /// when absent: reports written before they existed (and before any collector stored web
    /// events).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        app = try c.decode(String.self, forKey: .app)
        eventsStored = try c.decode(Int.self, forKey: .eventsStored)
        duplicatesDropped = try c.decode(Int.self, forKey: .duplicatesDropped)
        batches = try c.decode(Int.self, forKey: .batches)
        eventsByName = try c.decode([String: Int].self, forKey: .eventsByName)
        pointEvents = try c.decode(Int.self, forKey: .pointEvents)
        spanEvents = try c.decode(Int.self, forKey: .spanEvents)
        useCases = try c.decode([String: UseCase].self, forKey: .useCases)
        useCasesOmitted = try c.decodeIfPresent(Int.self, forKey: .useCasesOmitted) ?? 0
        network = try c.decode(DurationSummary.self, forKey: .network)
        sessions = try c.decode(DurationSummary.self, forKey: .sessions)
        abandonedSpans = try c.decode(Int.self, forKey: .abandonedSpans)
        prunedOnDevices = try c.decode(Int.self, forKey: .prunedOnDevices)
        databaseResets = try c.decode(Int.self, forKey: .databaseResets)
        quarantinedOnDevices = try c.decodeIfPresent(Int.self, forKey: .quarantinedOnDevices) ?? 0
        aggregates = try c.decodeIfPresent([String: AggregateSummary].self, forKey: .aggregates) ?? [:]
        aggregatesOmitted = try c.decodeIfPresent(Int.self, forKey: .aggregatesOmitted) ?? 0
        eventsBySource = try c.decodeIfPresent(EventsBySource.self, forKey: .eventsBySource)
            ?? EventsBySource(native: eventsStored, web: 0)
        webOrigins = try c.decodeIfPresent(Int.self, forKey: .webOrigins) ?? 0
        filter = try c.decodeIfPresent(ReportFilter.self, forKey: .filter) ?? ReportFilter()
        versions = try c.decodeIfPresent(VersionCounts.self, forKey: .versions) ?? VersionCounts()
    }

    /// The report for people: a few aligned lines.
    public func render() -> String {
        func ms(_ value: Double?) -> String { value.map { $0 >= 100 ? String(format: "%.0f ms", $0) : String(format: "%.1f ms", $0) } ?? "—" }
        func summary(_ s: DurationSummary) -> String { "p50 \(ms(s.p50Milliseconds)) · p95 \(ms(s.p95Milliseconds)) (n=\(s.count))" }
        var lines = [
            "Collector (app \(app)): \(eventsStored) events stored (\(pointEvents) point, \(spanEvents) spans) · \(duplicatesDropped) duplicates dropped · \(batches) batches",
        ]
        if let line = filter.line {
            lines.append(line)
        }
        if prunedOnDevices > 0 || abandonedSpans > 0 || databaseResets > 0 || quarantinedOnDevices > 0 {
            var devices = "Devices: \(prunedOnDevices) events pruned before upload · \(abandonedSpans) spans abandoned · \(databaseResets) database resets"
            if quarantinedOnDevices > 0 { devices += " · \(quarantinedOnDevices) refused events quarantined" }
            lines.append(devices)
        }
        if eventsBySource.web > 0 {
            lines.append("Sources: \(eventsBySource.native) native · \(eventsBySource.web) web (\(webOrigins) \(webOrigins == 1 ? "origin" : "origins"))")
        }
        for (name, useCase) in useCases.sorted(by: { $0.key < $1.key }) {
            lines.append("Use case \(name): \(useCase.started) started · \(useCase.completed) completed · \(useCase.abandoned) abandoned (\(String(format: "%.1f", useCase.abandonmentRate * 100))%) · time to complete \(summary(useCase.duration))")
            if let split = useCase.server {
                func part(_ s: DurationSummary) -> String { "p50 \(ms(s.p50Milliseconds)) p95 \(ms(s.p95Milliseconds))" }
                lines.append("  server split (n=\(split.transactions)): client \(part(split.client)) · network \(part(split.network)) · server \(part(split.server))")
            }
            if let step = useCase.topLeavingStep {
                lines.append("  most left after step \(step.name): \(step.left) of \(useCase.abandoned) abandoned · \(useCase.leftBeforeFirstStep) before a first step · \(useCase.steps.count + useCase.stepsOmitted) steps")
            }
        }
        if useCasesOmitted > 0 {
            lines.append("(\(useCasesOmitted) less started use cases not listed)")
        }
        lines.append("Network round trip: \(summary(network))")
        lines.append("Session duration: \(summary(sessions))")
        if let line = versions.line {
            lines.append(line)
        }
        if !aggregates.isEmpty || aggregatesOmitted > 0 {
            lines.append("Aggregated measurements:")
            for (name, aggregate) in aggregates.sorted(by: { $0.key < $1.key }) {
                let head = "  \(name) (\(aggregate.count) events in \(aggregate.records) aggregates)"
                if aggregate.measures.isEmpty { lines.append(head) }
                for (measure, s) in aggregate.measures.sorted(by: { $0.key < $1.key }) {
                    lines.append("\(head) \(measure): n=\(s.count) · mean \(Self.number(s.mean)) · min \(Self.number(s.min)) · max \(Self.number(s.max)) · p50 \(Self.number(s.p50)) · p95 \(Self.number(s.p95)) · p99 \(Self.number(s.p99))")
                }
            }
            if aggregatesOmitted > 0 {
                lines.append("  (\(aggregatesOmitted) aggregated names with fewer events not listed)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A measure's value for people: measures have no unit the report knows, so a few
    /// significant digits, whatever the magnitude.
    static func number(_ value: Double?) -> String {
        guard let value else { return "—" }
        let magnitude = abs(value)
        if magnitude == 0 { return "0" }
        if magnitude >= 100 && magnitude < 1e9 { return String(format: "%.0f", value) }
        if magnitude >= 1 && magnitude < 100 { return String(format: "%.2f", value) }
        return String(format: "%.3g", value)
    }
}
