import CollectorTestSupport
import Foundation
import Logging
@_spi(NFLogShared) @testable import NFLogSupport
import Testing
@testable import NFLogCollector

/// Sessions listed by many batches, their ends growing, for the sessions' rollup tests.
enum SessionRollupFixtures {
    static let t0: Int64 = 1_750_000_000_000
    static let hour: Int64 = 3_600_000

    /// One listing of a session: the batch's app version and the end it gives (nil: not yet
    /// suspended; before the start: a device's clock).
    struct Listing: Sendable {
        let id: UUID
        let started: Int64
        let ended: Int64?
        let version: String
    }

    /// `count` sessions over five hours, each listed 1 to 5 times with ends that grow, shrink
    /// (an older batch arriving late), go missing or fall before the start; in batches of 1 to 3
    /// listings (each with an event), shuffled; a batch in five sent twice.
    static func batches(seed: UInt64, count: Int) -> [Batch] {
        var random = SeededRandom(seed: seed)
        var listings: [Listing] = []
        for _ in 0..<count {
            let id = UUID()
            let started = t0 + Int64.random(in: 0..<(5 * hour), using: &random)
            let version = ["1.9", "2.0"].randomElement(using: &random) ?? "2.0"
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let ended: Int64? = switch Int.random(in: 0..<6, using: &random) {
                case 0: nil
                case 1: started - Int64.random(in: 1...5_000, using: &random)
                default: started + Int64(exp(Double.random(in: 0...15, using: &random)))
                }
                listings.append(Listing(id: id, started: started, ended: ended, version: version))
            }
        }
        listings.shuffle(using: &random)
        var batches: [Batch] = []
        var next = 0
        while next < listings.count {
            // Distinct sessions in one batch (a batch lists each once).
            var cut: [Listing] = []
            while next < listings.count, cut.count < Int.random(in: 1...3, using: &random),
                  !cut.contains(where: { $0.id == listings[next].id }) {
                cut.append(listings[next])
                next += 1
            }
            if cut.isEmpty {
                cut.append(listings[next])
                next += 1
            }
            batches.append(batch(cut))
            if Int.random(in: 0..<5, using: &random) == 0, let last = batches.last { batches.append(last) }
        }
        return batches
    }

    /// The sessions as a store keeps them after `batches` in this order: the start and app
    /// version of the first listing stored, the latest end.
    static func stored(_ batches: [Batch]) -> [UUID: SessionRollup.Session] {
        var sessions: [UUID: SessionRollup.Session] = [:]
        for batch in batches {
            for listed in batch.context.sessions {
                let old = sessions[listed.id]
                sessions[listed.id] = SessionRollup.Session(started: old?.started ?? listed.startedAt,
                                                            ended: SessionRollup.ended(stored: old?.ended, listed: listed.endedAt),
                                                            appVersion: old?.appVersion ?? batch.context.appVersion)
            }
        }
        return sessions
    }

    /// The summary of the sessions `filter` selects, by their start and app version.
    static func summary(_ sessions: [UUID: SessionRollup.Session], _ filter: ReportFilter) -> DurationSummary {
        var rollup = SessionRollup()
        for session in sessions.values where filter.from.map({ session.started >= $0 }) ?? true
            && filter.to.map({ session.started < $0 }) ?? true && filter.appVersion.map({ session.appVersion == $0 }) ?? true {
            rollup.add(session, sign: 1)
        }
        return rollup.summary
    }

    static func batch(_ listings: [Listing]) -> Batch {
        let version = listings.first?.version ?? "2.0"
        let event = Batch.Event(id: UUID(), session: listings.first?.id ?? UUID(), name: "ui.tap", kind: .point, type: "event",
                                timestamp: t0, end: nil, durationMilliseconds: nil, parameters: nil, endParameters: nil,
                                abandoned: false, transaction: nil, parentSpan: nil, source: .native, origin: nil)
        return Batch(version: 1, id: UUID(), sentAt: t0, sdkName: "NFLogger", sdkVersion: "1.0.0",
                     context: Batch.Context(appID: "a", appVersion: version, osName: "iOS", osVersion: "18", locale: "en",
                                            sessions: listings.map { Batch.Session(id: $0.id, startedAt: $0.started, endedAt: $0.ended) }),
                     events: [event], aggregates: [], diagnostics: nil)
    }

    static func rows(_ store: any EventStore, fromSessions: Bool) async throws -> SessionRollup {
        switch store {
        case let sqlite as SQLiteEventStore: return try await sqlite.sessionRows(app: "shop", fromSessions: fromSessions)
        case let postgres as PostgresEventStore: return try await postgres.sessionRows(app: "shop", fromSessions: fromSessions)
        default: throw CancellationError()
        }
    }

    /// Whether the rollup holds what the stored sessions add up to now, row by row.
    static func expectRollupEqualsSessions(_ store: any EventStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let stored = try await rows(store, fromSessions: true)
        #expect(RollupFixtures.differences(try await rows(store, fromSessions: false).rows, stored.rows) == [],
                sourceLocation: sourceLocation)
        #expect(!stored.isEmpty, sourceLocation: sourceLocation)
    }
}

@Suite("The sessions' rollup: moved from bucket to bucket as sessions end later, equal to the sessions")
struct SessionRollupTests {
    typealias F = SessionRollupFixtures

    @Test("Sessions listed again and again, their ends growing, late, missing or before their start: the rollup equals the stored sessions, and the report's figures those of the sessions it selects",
          arguments: StoreKind.all)
    func rollupEqualsSessions(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let batches = F.batches(seed: 3, count: 150)
            for (index, batch) in batches.enumerated() {
                _ = try await store.store(batch, app: "shop", receivedAt: F.t0 + Int64(index))
                if index == batches.count / 2 { try await F.expectRollupEqualsSessions(store) }
            }
            try await F.expectRollupEqualsSessions(store)
            // The report, whole, within parts of hours and of one version: the sessions it selects
            // by their start, as a store keeps them.
            let sessions = F.stored(batches)
            for filter in [ReportFilter(), ReportFilter(from: F.t0 + 1_234_567, to: F.t0 + 3 * F.hour + 7_654),
                           ReportFilter(appVersion: "1.9"), ReportFilter(from: F.t0 + F.hour / 3, appVersion: "2.0")] {
                let expected = F.summary(sessions, filter)
                #expect(expected.count > 10)
                #expect(try await store.report(app: "shop", filter: filter).sessions == expected, "\(filter)")
            }
            if let postgres = store as? PostgresEventStore {
                while try await !postgres.foldCounts() {}
                try await F.expectRollupEqualsSessions(store)
            }
        }
    }

    @Test("Batches listing the same sessions stored at once (on PostgreSQL, concurrent transactions) move each session once",
          arguments: StoreKind.all)
    func concurrentListings(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let batches = F.batches(seed: 4, count: 40)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<6 {
                    group.addTask {
                        for (index, batch) in batches.enumerated() where index % 6 == lane {
                            _ = try await store.store(batch, app: "shop", receivedAt: F.t0 + Int64(index))
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await F.expectRollupEqualsSessions(store)
        }
    }

    @Test("A store from before the sessions' rollup gets it at its first start, and batches listing its sessions meanwhile move them once",
          arguments: StoreKind.all)
    func upgradeBackfills(kind: StoreKind) async throws {
        let all = F.batches(seed: 5, count: 60)
        let before = Array(all.prefix(all.count / 2))
        try await RollupTests.upgrade(kind, from: .beforeFunnels, before: before, after: Array(all.dropFirst(before.count))) { store in
            try await F.expectRollupEqualsSessions(store)
        }
    }

    @Test("The SQLite backfill of sessions in steps of five, with batches listing them stored between its steps, adds each once")
    func backfillInSteps() async throws {
        let all = F.batches(seed: 6, count: 80)
        let before = Array(all.prefix(all.count / 2))
        try await RollupTests.upgradeInSteps(from: .beforeFunnels, before: before, after: Array(all.dropFirst(before.count))) { store in
            try await F.expectRollupEqualsSessions(store)
        }
    }

    @Test("A session moves from bucket to bucket as its end grows; one without an end, or ending before its start, counts nowhere")
    func moves() {
        var rollup = SessionRollup()
        let first = SessionRollup.Session(started: 3_600_000, ended: 3_600_100, appVersion: "1")
        rollup.change(from: nil, to: first)
        rollup.change(from: first, to: SessionRollup.Session(started: 3_600_000, ended: 3_700_000, appVersion: "1"))
        #expect(rollup.rows == [SessionRollup.Key(hour: 1, appVersion: "1", bucket: DurationBucket.key(100_000)):
                                    .init(sessions: 1, micros: 100_000_000)])
        var none = SessionRollup()
        none.change(from: nil, to: SessionRollup.Session(started: 10, ended: nil, appVersion: "1"))
        none.change(from: nil, to: SessionRollup.Session(started: 10, ended: 9, appVersion: "1"))
        #expect(none.isEmpty && none.summary.count == 0)
    }
}
