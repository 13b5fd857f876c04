extension AnalyticsReport {
    /// The report both stores return, assembled from what each computed: the rollups' sections,
    /// and the listed use cases' server splits and funnels, the sessions and the aggregates.
    ///
    /// With a time range or an app version, the stored events, their names and the abandoned
    /// spans are those the filter selects (the rollups'); otherwise they stay the app's running
    /// totals (`stats`), which the rollups equal once every stored event is in them.
    init(app: String, stats: CollectorStats, filter: ReportFilter, sections: RollupSections, splits: [String: ServerSplit],
         funnels: [String: FunnelAnalysis.Funnel], sessions: DurationSummary, aggregates: [String: AggregateSummary],
         aggregatesOmitted: Int) {
        var useCases: [String: UseCase] = [:]
        for (name, entry) in sections.useCases {
            useCases[name] = UseCase(started: entry.started, abandoned: entry.abandoned, duration: entry.duration,
                                     server: splits[name], funnel: funnels[name])
        }
        let counted = filter.selectsEvents
            ? stats.counting(events: sections.events, byName: sections.byName, abandonedSpans: sections.abandonedSpans) : stats
        self.init(app: app, stats: counted, pointEvents: sections.events - sections.spans, spanEvents: sections.spans,
                  useCases: useCases, network: sections.network, sessions: sessions,
                  useCasesOmitted: sections.useCaseNames - sections.useCases.count,
                  aggregates: aggregates, aggregatesOmitted: aggregatesOmitted,
                  eventsBySource: EventsBySource(native: sections.events - sections.web, web: sections.web),
                  webOrigins: sections.webOrigins, filter: filter, versions: sections.versions)
    }
}

extension CollectorStats {
    /// These totals with the events, their names and the abandoned spans a filter selected.
    func counting(events: Int, byName: [String: Int], abandonedSpans: Int) -> CollectorStats {
        CollectorStats(app: app, eventsStored: events, duplicatesDropped: duplicatesDropped, batches: batches,
                       requests: requests, eventsByName: byName, abandonedSpans: abandonedSpans,
                       prunedOnDevices: prunedOnDevices, prunedOnDevicesByName: prunedOnDevicesByName,
                       databaseResets: databaseResets, aggregatesStored: aggregatesStored,
                       aggregateDuplicatesDropped: aggregateDuplicatesDropped, aggregatedEvents: aggregatedEvents,
                       quarantinedOnDevices: quarantinedOnDevices)
    }
}
