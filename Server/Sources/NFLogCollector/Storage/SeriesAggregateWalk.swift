@_spi(NFLogShared) import NFLogSupport

/// Folds a series' aggregate rows, fed one listed name at a time in (start, row id) order, into
/// each measure's list of buckets; both stores feed it, so they merge the same sketches in the
/// same order and give the same figures.
///
/// Memory stays bounded: only the bucket being walked holds sketches (one
/// ``AggregateAnalysis/Merged``, at most ``ReportSeries/maxMeasures`` of them); a finished
/// bucket is reduced to its figures at once.
struct SeriesAggregateWalk {
    let bucket: SeriesBucket
    /// By name, then measure: the finished buckets.
    private(set) var aggregates: [String: [String: [ReportSeries.MeasurePoint]]] = [:]
    /// The measures admitted for the current name: the first ``ReportSeries/maxMeasures`` seen.
    private var admitted: Set<String> = []
    private var current: (name: String, start: Int64, merged: AggregateAnalysis.Merged)?

    init(bucket: SeriesBucket) {
        self.bucket = bucket
    }

    /// Starts a listed name: it is in the result even if none of its aggregates has a measure.
    mutating func begin(name: String) {
        finishBucket()
        aggregates[name] = [:]
        admitted = []
    }

    /// One aggregate of the name last begun, no earlier than the one before it.
    mutating func add(name: String, start: Int64, count: Int64, measures: [String: MeasureSummary]) {
        let bucketStart = bucket.start(of: start)
        if current?.name != name || current?.start != bucketStart {
            finishBucket()
            current = (name, bucketStart, AggregateAnalysis.Merged())
        }
        // In name order within one aggregate: a dictionary's own order differs between runs.
        var kept: [String: MeasureSummary] = [:]
        for key in measures.keys.sorted() {
            guard admitted.contains(key) || admitted.count < ReportSeries.maxMeasures else { continue }
            admitted.insert(key)
            kept[key] = measures[key]
        }
        current?.merged.add(count: count, measures: kept)
    }

    /// The series' aggregates, once every row was added.
    mutating func finish() -> [String: [String: [ReportSeries.MeasurePoint]]] {
        finishBucket()
        return aggregates
    }

    private mutating func finishBucket() {
        guard let (name, start, merged) = current else { return }
        current = nil
        for (measure, statistics) in merged.summary(records: 0).measures {
            aggregates[name, default: [:]][measure, default: []].append(ReportSeries.MeasurePoint(start: start, statistics))
        }
    }
}
