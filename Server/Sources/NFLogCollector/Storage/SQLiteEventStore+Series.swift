extension SQLiteEventStore {
    /// On the reader, within the store's ``readTimeLimit``, like the report (``SeriesAnalysis``).
    package func series(app: String, query: SeriesQuery) async throws -> ReportSeries {
        try await onReadQueue(timeLimit: readTimeLimit) { connection in try SeriesAnalysis.series(connection, app: app, query: query) }
    }
}
