@_spi(NFLogShared) import NFLogSupport

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
/// The report reads the funnels of whole hours from their rollup (``FunnelRollup``); this query
/// computes them from the events for the parts of an hour at a range's ends (and in tests, for
/// all of it, to check the rollup). Memory does not grow with the runs: SQL reduces them to one
/// row per (use case, step name). On SQLite the runs and their steps are read from two partial indexes
/// (migration 10), events_runs (use-case spans in a transaction) and events_steps (events with a
/// parent span), so an app that logs no transactions pays nothing here, and one that does pays in
/// proportion to its runs' steps: the runs' steps once (how many runs reached each name), and the
/// abandoned runs' again (each one's last).
enum FunnelAnalysis {
    /// One use case's funnel.
    struct Funnel: Sendable {
        var steps: [UseCaseStep] = []
        /// Step names logged against the runs, listed or not.
        var names = 0
        /// Abandoned runs with at least one step: each left at exactly one.
        var leftAtSteps = 0
    }

    /// The funnel's statement over the runs `selection` selects: rows of (use case, step,
    /// reached, left).
    /// `byHour`: the runs are found through events_hours (the range's hours), not events_runs
    /// (every run of the app): for a range within an hour, a part of it at a range's end.
    static func sql(_ selection: SQLiteReportSelection, byHour: Bool = false) -> String {
        // Runs are use-case spans in a transaction: `given_up` is set for use cases only, and
        // events_runs holds exactly those, so the runs, and each run's steps (events_steps,
        // sought by the run's transaction, span id and context), are read from indexes alone.
        // `reached` walks every run's steps; `abandoned` only the abandoned runs', each one's latest
        // (materialized, so that its subquery runs once a run, not once for each use of it).
        let runs = byHour ? "events u INDEXED BY events_hours" : "events u INDEXED BY events_runs"
        let ofRun = """
            s.app = ?1 AND s.parent_span IS NOT NULL AND s.transaction_id = u.transaction_id
            AND s.parent_span = u.span_id AND s.context_id = u.context_id
            """
        let selected = "u.app = ?1 AND u.span_id IS NOT NULL AND u.given_up IS NOT NULL\(selection.events("u"))"
        return """
            WITH reached AS (
                SELECT u.name AS use_case, s.name AS step, count(DISTINCT u.id) AS reached
                FROM \(runs) CROSS JOIN events s INDEXED BY events_steps ON \(ofRun)
                WHERE \(selected) AND u.given_up IS NOT NULL
                GROUP BY u.name, s.name
            ),
            abandoned AS MATERIALIZED (
                SELECT u.name AS use_case, (
                    SELECT s.name FROM events s INDEXED BY events_steps WHERE \(ofRun)
                    ORDER BY s.timestamp_ms DESC, s.name DESC LIMIT 1
                ) AS step
                FROM \(runs) WHERE \(selected) AND u.given_up = 1
            ),
            lasts AS (SELECT use_case, step, count(*) AS left_here FROM abandoned WHERE step IS NOT NULL GROUP BY use_case, step)
            SELECT r.use_case, r.step, r.reached, coalesce(l.left_here, 0)
            FROM reached r LEFT JOIN lasts l ON l.use_case = r.use_case AND l.step = r.step
            """
    }

    /// Adds the funnel rows of the runs `selection` selects (by the run's start and context; all
    /// of a selected run's steps count), read in the caller's transaction, as rows of hour −1.
    static func add(_ c: SQLiteConnection, app: String, selection: SQLiteReportSelection, byHour: Bool = false,
                    to funnel: inout FunnelRollup) throws(SQLiteError) {
        let rows = try c.prepare(sql(selection, byHour: byHour))
        try selection.bind(rows, app: app)
        try SQLiteEventStore.walk(rows) { row in
            funnel.add(FunnelRollup.Key(hour: -1, appVersion: "", useCase: row.text(at: 0) ?? "", step: row.text(at: 1) ?? ""),
                       FunnelRollup.Counts(reached: row.int64(at: 2), left: row.int64(at: 3)))
        }
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
