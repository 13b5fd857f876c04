import CollectorTestSupport
import Foundation
import Logging
@_spi(NFLogShared) @testable import NFLogSupport
import Testing
@testable import NFLogCollector

/// Runs and their steps for the funnel rollup's tests, cut into batches that arrive in any order.
enum FunnelRollupFixtures {
    static let t0: Int64 = 1_750_000_000_000
    static let hour: Int64 = 3_600_000
    static let useCases = ["checkout", "signup", "search"]
    static let stepNames = ["cart", "address", "pay", "review", "done"]
    static let versions = ["1.9", "2.0"]

    /// `runs` runs over five hours, each with up to seven steps (names repeated, timestamps
    /// tied, some before the run's start), half of them given up, a few with no steps; a few
    /// steps logged by the other app version (another context: not the run's). The events of
    /// each version are shuffled and cut into batches of 1 to 12, in shuffled order; a batch in
    /// four is sent twice, and an event in twenty is repeated within its batch.
    static func batches(seed: UInt64, runs: Int, largest: Int = 12) -> [Batch] {
        var random = SeededRandom(seed: seed)
        var events: [String: [Batch.Event]] = [:]
        for (version, event) in self.runs(&random, count: runs).flatMap({ $0 }) { events[version, default: []].append(event) }
        var batches: [Batch] = []
        for version in versions {
            var pending = (events[version] ?? []).shuffled(using: &random)
            while !pending.isEmpty {
                var cut = Array(pending.prefix(Int.random(in: 1...largest, using: &random)))
                pending.removeFirst(cut.count)
                if Int.random(in: 0..<20, using: &random) == 0, let first = cut.first { cut.append(first) }
                let batch = Self.batch(version, cut)
                batches.append(batch)
                if Int.random(in: 0..<4, using: &random) == 0 { batches.append(batch) }
            }
        }
        return batches.shuffled(using: &random)
    }

    /// Each run's events as batches of one event each, run by run, each batch listing a session
    /// of its own (batches that list one session wait on its row): sent at once, every batch of
    /// a run races the others.
    static func batchesByRun(seed: UInt64, runs: Int) -> [[Batch]] {
        var random = SeededRandom(seed: seed)
        return self.runs(&random, count: runs).map { run in run.map { batch($0.version, [$0.event], session: UUID()) } }
    }

    static let session = UUID()

    static func batch(_ version: String, _ events: [Batch.Event], session: UUID = session) -> Batch {
        Batch(version: 1, id: UUID(), sentAt: t0, sdkName: "NFLogger", sdkVersion: "1.0.0",
              context: Batch.Context(appID: "a", appVersion: version, osName: "iOS", osVersion: "18", locale: "en",
                                     sessions: [Batch.Session(id: session, startedAt: t0, endedAt: nil)]),
              events: events, aggregates: [], diagnostics: nil)
    }

    /// `count` runs over five hours, each with up to seven steps (names repeated, timestamps
    /// tied, some before the run's start), about half of them given up, some with no steps; a
    /// few steps logged by the other app version (another context: not the run's). Each run's
    /// events with their app version, the run first.
    static func runs(_ random: inout SeededRandom, count: Int) -> [[(version: String, event: Batch.Event)]] {
        (0..<count).map { _ in
            let run = UUID()
            let version = versions.randomElement(using: &random) ?? "2.0"
            let start = t0 + Int64.random(in: 0..<(5 * hour), using: &random)
            let ending = [nil, #"{"completed":true}"#, #"{"completed":false}"#].randomElement(using: &random) ?? nil
            var events = [(version, Batch.Event(
                id: run, session: session, name: useCases.randomElement(using: &random) ?? "checkout", kind: .span, type: "usecase",
                timestamp: start, end: start + 500, durationMilliseconds: 500, parameters: nil, endParameters: ending,
                abandoned: Int.random(in: 0..<4, using: &random) == 0, transaction: run, parentSpan: nil, source: .native, origin: nil))]
            let parent = SpanID(spanUUID: run)
            for _ in 0..<Int.random(in: 0...7, using: &random) {
                // Ties: steps on a 100 ms grid around the start.
                let at = start + 100 * Int64.random(in: -2...5, using: &random)
                let other = Int.random(in: 0..<15, using: &random) == 0
                let stepVersion = other ? (versions.first { $0 != version } ?? version) : version
                let span = Bool.random(using: &random)
                events.append((stepVersion, Batch.Event(
                    id: UUID(), session: session, name: stepNames.randomElement(using: &random) ?? "cart", kind: span ? .span : .point,
                    type: span ? "network" : "event", timestamp: at, end: span ? at + 40 : nil, durationMilliseconds: span ? 40 : nil,
                    parameters: nil, endParameters: nil, abandoned: false, transaction: run, parentSpan: parent, source: .native,
                    origin: nil)))
            }
            return events
        }
    }

    /// The filters the rollups and the events must agree on: everything, whole hours, parts of
    /// hours at both ends, one app version.
    static let filters: [ReportFilter] = [
        ReportFilter(),
        ReportFilter(from: (t0 / hour + 1) * hour, to: (t0 / hour + 3) * hour),
        ReportFilter(from: t0 + 1_234_567, to: t0 + 3 * hour + 7_654),
        ReportFilter(appVersion: "2.0"),
        ReportFilter(from: t0 + hour / 2, appVersion: "1.9"),
    ]

    static func rows(_ store: any EventStore, filter: ReportFilter, fromEvents: Bool) async throws -> FunnelRollup {
        switch store {
        case let sqlite as SQLiteEventStore: return try await sqlite.funnelRows(app: "shop", filter: filter, fromEvents: fromEvents)
        case let postgres as PostgresEventStore: return try await postgres.funnelRows(app: "shop", filter: filter, fromEvents: fromEvents)
        default: throw CancellationError()
        }
    }

    /// Whether the rollups give the events' funnel rows for every filter (the differences
    /// recorded if not).
    static func expectRollupsEqualEvents(_ store: any EventStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for filter in filters {
            let fromRollups = try await rows(store, filter: filter, fromEvents: false)
            let fromEvents = try await rows(store, filter: filter, fromEvents: true)
            #expect(RollupFixtures.differences(fromRollups.rows, fromEvents.rows) == [], "\(filter)", sourceLocation: sourceLocation)
        }
    }
}

@Suite("The funnels' rollup: corrected by every batch, equal to the funnels of the events")
struct FunnelRollupTests {
    typealias F = FunnelRollupFixtures

    @Test("Steps before their run, after it, in many batches, repeated and retried: the rollup gives the events' funnels for every filter, and the report lists them",
          arguments: StoreKind.all)
    func rollupEqualsEvents(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let batches = F.batches(seed: 7, runs: 120)
            // Half stored, checked, then the rest: a run's later steps correct what it counted.
            for (index, batch) in batches.enumerated() {
                _ = try await store.store(batch, app: "shop", receivedAt: F.t0 + Int64(index))
                if index == batches.count / 2 { try await F.expectRollupsEqualEvents(store) }
            }
            try await F.expectRollupsEqualEvents(store)
            let whole = try await F.rows(store, filter: ReportFilter(), fromEvents: true)
            #expect(whole.rows.count > 10 && whole.rows.values.contains { $0.left > 0 })
            let report = try await store.report(app: "shop")
            let checkout = try #require(report.useCases["checkout"])
            let expected = whole.funnels(listed: ["checkout"])["checkout"]
            #expect(checkout.steps == expected?.steps && !checkout.steps.isEmpty)
            if let postgres = store as? PostgresEventStore {
                while try await !postgres.foldCounts() {}
                try await F.expectRollupsEqualEvents(store)
            }
        }
    }

    @Test("Batches of up to 150 events, stored many rows to a statement, some retried, some with a uuid twice: the rollup still gives the events' funnels",
          arguments: StoreKind.all)
    func largeBatches(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let batches = F.batches(seed: 9, runs: 150, largest: 150)
            #expect(batches.contains { $0.events.count >= SQLiteEventInserts.rowsPerInsert })
            for (index, batch) in batches.enumerated() {
                _ = try await store.store(batch, app: "shop", receivedAt: F.t0 + Int64(index))
            }
            try await F.expectRollupsEqualEvents(store)
        }
    }

    @Test("A run's batches stored at once (on PostgreSQL, concurrent transactions, each of which may miss the others' uncommitted steps) still give the events' funnels",
          arguments: StoreKind.all)
    func concurrentBatches(kind: StoreKind) async throws {
        try await kind.withStore { store in
            for (offset, run) in F.batchesByRun(seed: 8, runs: 60).enumerated() {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for batch in run {
                        group.addTask { _ = try await store.store(batch, app: "shop", receivedAt: F.t0 + Int64(offset)) }
                    }
                    try await group.waitForAll()
                }
            }
            try await F.expectRollupsEqualEvents(store)
        }
    }

    @Test("A store from before the funnels' rollup gets it at its first start, and uploads meanwhile correct the runs already added",
          arguments: StoreKind.all)
    func upgradeBackfills(kind: StoreKind) async throws {
        let all = F.batches(seed: 9, runs: 100)
        let before = Array(all.prefix(all.count * 2 / 3))
        try await RollupTests.upgrade(kind, from: .beforeFunnels, before: before, after: Array(all.dropFirst(before.count))) { store in
            try await F.expectRollupsEqualEvents(store)
        }
    }

    @Test("The SQLite backfill in steps of five row ids, with batches stored between its steps, adds each run once with all its steps")
    func backfillInSteps() async throws {
        let all = F.batches(seed: 10, runs: 80)
        let before = Array(all.prefix(all.count / 2))
        try await RollupTests.upgradeInSteps(from: .beforeFunnels, before: before, after: Array(all.dropFirst(before.count))) { store in
            try await F.expectRollupsEqualEvents(store)
        }
    }

    @Test("A run's last step: the latest timestamp, ties to the greater name in bytes; a correction moves the left, not the reached")
    func lastStepAndCorrection() {
        let run = FunnelRollup.Run(hour: 1, appVersion: "1", useCase: "u", givenUp: true)
        func key(_ step: String) -> FunnelRollup.Key { FunnelRollup.Key(hour: 1, appVersion: "1", useCase: "u", step: step) }
        var funnel = FunnelRollup()
        let first = [FunnelRollup.Step(id: 1, name: "b", timestamp: 10), FunnelRollup.Step(id: 2, name: "a", timestamp: 10),
                     FunnelRollup.Step(id: 3, name: "B", timestamp: 10)]
        funnel.correct(run, steps: first, isNew: true, newSteps: [1, 2, 3])
        #expect(funnel.rows == [key("a"): .init(reached: 1), key("b"): .init(reached: 1, left: 1), key("B"): .init(reached: 1)])
        // A later step of a name it reached: no new reached, the left moves to it.
        funnel.correct(run, steps: first + [FunnelRollup.Step(id: 4, name: "a", timestamp: 11)], isNew: false, newSteps: [4])
        #expect(funnel.rows == [key("a"): .init(reached: 1, left: 1), key("b"): .init(reached: 1), key("B"): .init(reached: 1)])
        // A completed run counts reached only; no step: nothing.
        var completed = FunnelRollup()
        completed.add(FunnelRollup.Run(hour: 1, appVersion: "1", useCase: "u", givenUp: false), steps: first, sign: 1)
        #expect(completed.rows.values.allSatisfy { $0 == .init(reached: 1) })
        completed.add(run, steps: [], sign: 1)
        #expect(completed.rows.count == 3)
    }
}
