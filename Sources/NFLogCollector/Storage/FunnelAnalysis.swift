import NFLogSupport

/// The report's funnel of each use case (``AnalyticsReport/UseCase/steps``): the events logged
/// against its runs, how many runs reached each, and where the abandoned runs left.
///
/// A *run* is a use case's span; a *step* of it is an event (point or span) logged against it:
/// the run's transaction id as `transaction`, the run's span id as `parent_span`, by the app
/// instance that logged the run (the same context, as ``TransactionAnalysis`` requires of a
/// client call, so a backend's spans are not steps, nor is a device clock mixed with a
/// server's). A run *reached* a step when it logged at least one event of that name; an abandoned
/// run *left* at its last step, the one with the latest device timestamp (ties: the greater name
/// in byte order, so both stores agree).
///
/// Memory does not grow with the runs: SQL reduces them to one row per (use case, step name),
/// in (use case, most reached, name) order, each carrying its use case's number of step names and
/// abandoned runs with a step; the walk keeps the first ``AnalyticsReport/UseCase/maxSteps`` of
/// each listed use case. On SQLite the steps are found through events_steps (migration 10), which
/// holds only events with a parent span, so an app that logs no transactions pays nothing here.
enum FunnelAnalysis {
    /// One use case's funnel.
    struct Funnel: Sendable {
        var steps: [UseCaseStep] = []
        /// Step names logged against the runs, listed or not.
        var names = 0
        /// Abandoned runs with at least one step: each left at exactly one.
        var leftAtSteps = 0
    }

    /// Gathers the rows of either store's funnel query, in their order.
    struct Collector {
        private(set) var funnels: [String: Funnel] = [:]
        let listed: Set<String>

        init(listed: Set<String>) {
            self.listed = listed
        }

        mutating func add(useCase: String, step: String, reached: Int, left: Int, names: Int, leftAtSteps: Int) {
            // Use cases past the listed ones are skipped, not kept.
            guard listed.contains(useCase) else { return }
            var funnel = funnels[useCase] ?? Funnel(names: names, leftAtSteps: leftAtSteps)
            if funnel.steps.count < AnalyticsReport.UseCase.maxSteps {
                funnel.steps.append(UseCaseStep(name: step, reached: reached, left: left))
            }
            funnels[useCase] = funnel
        }
    }

    /// Reads in the caller's transaction (the report's snapshot): the funnels of the use cases in
    /// `names`, over the runs `selection` selects (by the run's start and context; all of a
    /// selected run's steps count).
    static func funnels(_ c: SQLiteConnection, app: String, names: Set<String>,
                        selection: SQLiteReportSelection) throws(SQLiteError) -> [String: Funnel] {
        guard !names.isEmpty else { return [:] }
        let rows = try c.prepare("""
            WITH runs AS (
                SELECT u.id AS run, u.name AS use_case, u.given_up AS given_up, s.name AS step, max(s.timestamp_ms) AS at
                FROM events s INDEXED BY events_steps
                JOIN events u ON u.app = ?1 AND u.uuid = s.transaction_id
                WHERE s.app = ?1 AND s.parent_span IS NOT NULL
                    AND u.kind = 'span' AND u.type = 'usecase' AND u.span_id = s.parent_span AND u.context_id = s.context_id\(selection.events("u"))
                GROUP BY u.id, s.name
            ),
            places AS (
                SELECT use_case, step, given_up, row_number() OVER (PARTITION BY run ORDER BY at DESC, step DESC) AS place FROM runs
            ),
            steps AS (
                SELECT use_case, step, count(*) AS reached, count(*) FILTER (WHERE given_up = 1 AND place = 1) AS left_here
                FROM places GROUP BY use_case, step
            )
            SELECT use_case, step, reached, left_here, count(*) OVER (PARTITION BY use_case), sum(left_here) OVER (PARTITION BY use_case)
            FROM steps ORDER BY use_case, reached DESC, step
            """)
        try selection.bind(rows, app: app)
        defer { rows.reset() }
        var collector = Collector(listed: names)
        while try rows.step() {
            collector.add(useCase: rows.text(at: 0) ?? "", step: rows.text(at: 1) ?? "", reached: Int(rows.int64(at: 2)),
                          left: Int(rows.int64(at: 3)), names: Int(rows.int64(at: 4)), leftAtSteps: Int(rows.int64(at: 5)))
        }
        return collector.funnels
    }
}

extension AnalyticsReport.UseCase {
    /// A listed use case from what both stores compute: its counts, its completed runs' durations,
    /// its server split and its funnel, if any.
    init(started: Int, abandoned: Int, duration: DurationSummary, server: ServerSplit?, funnel: FunnelAnalysis.Funnel?) {
        self.init(started: started, completed: duration.count, abandoned: abandoned,
                  abandonmentRate: Double(abandoned) / Double(started), duration: duration, server: server,
                  steps: funnel?.steps ?? [], stepsOmitted: (funnel?.names ?? 0) - (funnel?.steps.count ?? 0),
                  leftBeforeFirstStep: abandoned - (funnel?.leftAtSteps ?? 0))
    }
}
