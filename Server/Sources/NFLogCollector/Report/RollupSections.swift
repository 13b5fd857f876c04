@_spi(NFLogShared) import NFLogSupport
/// The report's sections that the hourly rollups answer, computed from a store's rollup rows for
/// the report's range and app version (``HourlyRollup``, whatever their hours): the one place
/// these figures are computed, for both stores, so their reports agree to the byte.
///
/// Counts are exact. Durations (use cases completed, network round trips) are summarised from
/// their buckets: percentiles within 1% of the exact nearest rank, means from exact sums.
/// Names and versions are ordered as SQL orders text, by bytes.
struct RollupSections: Sendable {
    private(set) var events = 0
    private(set) var spans = 0
    private(set) var web = 0
    private(set) var abandonedSpans = 0
    private(set) var byName: [String: Int] = [:]
    let webOrigins: Int
    let versions: VersionCounts
    /// The most started use cases (at most `maxUseCases`; ties by name, in bytes).
    let useCases: [String: UseCase]
    /// Use-case names in the range, listed or not.
    let useCaseNames: Int
    let network: DurationSummary

    struct UseCase: Sendable {
        let started: Int
        let abandoned: Int
        let duration: DurationSummary
    }

    /// Whether `a` sorts before `b` in byte order (SQLite's BINARY, PostgreSQL's "C").
    static func bytewise(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    init(_ rollup: HourlyRollup, maxUseCases: Int) {
        var appVersions: [String: Int] = [:]
        var sdkVersions: [SDKKey: Int] = [:]
        var started: [String: (started: Int, abandoned: Int, measured: Int64, micros: Int64)] = [:]
        var network = (measured: Int64(0), micros: Int64(0))
        for (key, counts) in rollup.events {
            let n = Int(counts.events)
            events += n
            byName[key.name, default: 0] += n
            appVersions[key.appVersion, default: 0] += n
            sdkVersions[SDKKey(name: key.sdkName, version: key.sdkVersion), default: 0] += n
            if key.source == Batch.Source.web.rawValue { web += n }
            guard key.kind == Batch.Kind.span.rawValue else { continue }
            spans += n
            abandonedSpans += Int(counts.abandoned)
            if key.type == "usecase" {
                var entry = started[key.name] ?? (0, 0, 0, 0)
                entry.started += n
                entry.abandoned += Int(counts.givenUp)
                entry.measured += counts.measured
                entry.micros = Self.saturating(entry.micros, counts.durationMicros)
                started[key.name] = entry
            } else if key.type == "network" {
                network.measured += counts.measured
                network.micros = Self.saturating(network.micros, counts.durationMicros)
            }
        }
        let listed = started.sorted { $0.value.started != $1.value.started ? $0.value.started > $1.value.started : Self.bytewise($0.key, $1.key) }
            .prefix(maxUseCases)
        let listedNames = Set(listed.map(\.key))
        var useCaseBuckets: [String: [Int64: Int64]] = [:]
        var networkBuckets: [Int64: Int64] = [:]
        for (key, count) in rollup.durations {
            if key.type == "usecase", listedNames.contains(key.name) {
                useCaseBuckets[key.name, default: [:]][key.bucket, default: 0] += count
            } else if key.type == "network" {
                networkBuckets[key.bucket, default: 0] += count
            }
        }
        var useCases: [String: UseCase] = [:]
        for (name, entry) in listed {
            useCases[name] = UseCase(started: entry.started, abandoned: entry.abandoned,
                                     duration: DurationSummary(buckets: useCaseBuckets[name] ?? [:], count: entry.measured,
                                                               microseconds: entry.micros))
        }
        self.useCases = useCases
        useCaseNames = started.count
        self.network = DurationSummary(buckets: networkBuckets, count: network.measured, microseconds: network.micros)
        webOrigins = Set(rollup.origins.keys.map(\.origin)).count
        func most<Key>(_ counts: [Key: Int], by before: (Key, Key) -> Bool) -> [(Key, Int)] {
            counts.filter { $0.value > 0 }.sorted { $0.value != $1.value ? $0.value > $1.value : before($0.key, $1.key) }
                .prefix(VersionCounts.maxListed).map { ($0.key, $0.value) }
        }
        versions = VersionCounts(
            app: most(appVersions, by: Self.bytewise).map { VersionCounts.App(version: $0.0, events: $0.1) },
            sdk: most(sdkVersions, by: { $0.name != $1.name ? Self.bytewise($0.name, $1.name) : Self.bytewise($0.version, $1.version) })
                .map { VersionCounts.SDK(name: $0.0.name, version: $0.0.version, events: $0.1) })
    }

    private struct SDKKey: Hashable {
        let name: String
        let version: String
    }

    private static func saturating(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
