import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The use cases' funnels as rollup rows (`funnel_hours`): per hour of the run's start (device
/// time), the run's app version, use case and step name, the runs that reached the step and the
/// abandoned runs that left at it (``FunnelAnalysis`` says what runs and steps are).
///
/// A run's row depends on all its steps, and steps arrive in any batch, before or after their run
/// (a use case's span is usually sent when it ends, after the steps logged during it). So each
/// store, as it stores a batch, takes every run the batch touches (a new run, or a stored run
/// with new steps), and adds what the run adds now minus what it added before the batch
/// (``correct(_:steps:isNew:newSteps:)``): a step name new to the run adds a reached, and an
/// abandoned run's last step moving takes its left from the old step to the new one. Counts sum
/// over hours and versions exactly, as the report sums them.
struct FunnelRollup: Sendable, Equatable {
    struct Key: Hashable, Sendable {
        let hour: Int64
        let appVersion: String
        let useCase: String
        let step: String
    }

    struct Counts: Equatable, Sendable {
        var reached: Int64 = 0
        var left: Int64 = 0
    }

    /// A run: a use case's span in a transaction.
    struct Run: Sendable {
        let hour: Int64
        let appVersion: String
        let useCase: String
        let givenUp: Bool
    }

    /// A step of a run as stored: its row id tells whether the batch being stored brought it.
    struct Step: Sendable {
        let id: Int64
        let name: String
        let timestamp: Int64
    }

    private(set) var rows: [Key: Counts] = [:]

    var isEmpty: Bool { rows.isEmpty }

    mutating func add(_ key: Key, _ counts: Counts) {
        var row = rows[key] ?? Counts()
        row.reached += counts.reached
        row.left += counts.left
        rows[key] = row == Counts() ? nil : row
    }

    mutating func add(_ other: Self) {
        for (key, counts) in other.rows { add(key, counts) }
    }

    /// Adds (`sign` 1) or takes back (−1) what `run` counts with these steps: a reached for
    /// each step name, and for a given-up run a left at its last step (the latest timestamp;
    /// ties: the greater name in bytes, as both stores order text).
    mutating func add(_ run: Run, steps: some Sequence<Step>, sign: Int64) {
        var names = Set<String>()
        var last: Step?
        for step in steps {
            names.insert(step.name)
            if let current = last, step.timestamp < current.timestamp
                || (step.timestamp == current.timestamp && !current.name.utf8.lexicographicallyPrecedes(step.name.utf8)) {
                continue
            }
            last = step
        }
        for name in names {
            add(Key(hour: run.hour, appVersion: run.appVersion, useCase: run.useCase, step: name), Counts(reached: sign))
        }
        if run.givenUp, let last {
            add(Key(hour: run.hour, appVersion: run.appVersion, useCase: run.useCase, step: last.name), Counts(left: sign))
        }
    }

    /// Adds what a run touched by a batch changes: all of a run the batch brought (`isNew`);
    /// for a run counted before, what its steps count now minus what they counted without the
    /// batch's (`newSteps`, by row id).
    mutating func correct(_ run: Run, steps: [Step], isNew: Bool, newSteps: Set<Int64>) {
        if isNew { return add(run, steps: steps, sign: 1) }
        let before = steps.filter { !newSteps.contains($0.id) }
        guard before.count < steps.count else { return }
        add(run, steps: before, sign: -1)
        add(run, steps: steps, sign: 1)
    }

    /// The report's funnels of the `listed` use cases: the rows summed over hours and versions,
    /// each use case's steps by most reached (ties: name in bytes), the first
    /// ``AnalyticsReport/UseCase/maxSteps`` kept, every step name and left counted.
    func funnels(listed: Set<String>) -> [String: FunnelAnalysis.Funnel] {
        var summed: [String: [String: Counts]] = [:]
        for (key, counts) in rows where listed.contains(key.useCase) {
            var row = summed[key.useCase, default: [:]][key.step] ?? Counts()
            row.reached += counts.reached
            row.left += counts.left
            summed[key.useCase, default: [:]][key.step] = row
        }
        var funnels: [String: FunnelAnalysis.Funnel] = [:]
        for (useCase, steps) in summed {
            let reached = steps.filter { $0.value.reached > 0 }
            guard !reached.isEmpty else { continue }
            let ordered = reached.sorted {
                $0.value.reached != $1.value.reached ? $0.value.reached > $1.value.reached : RollupSections.bytewise($0.key, $1.key)
            }
            funnels[useCase] = FunnelAnalysis.Funnel(
                steps: ordered.prefix(AnalyticsReport.UseCase.maxSteps).map {
                    UseCaseStep(name: $0.key, reached: Int($0.value.reached), left: Int($0.value.left))
                },
                names: reached.count, leftAtSteps: Int(reached.values.reduce(0) { $0 + $1.left }))
        }
        return funnels
    }
}

extension FunnelRollup {
    /// A run as a batch's events name it: its transaction and its span id (the app and the
    /// context, which a run and its steps share, are the batch's).
    struct RunKey: Hashable, Sendable {
        let transaction: UUID
        let span: Int64
    }

    /// The runs whose rows an event of a batch may change: its own, when it is a run (a use
    /// case's span in a transaction: `givenUp` is set for use cases only), and its parent's,
    /// when it is logged under a span of its transaction.
    static func runKeys(of event: Batch.Event, givenUp: Bool?) -> [RunKey] {
        guard let transaction = event.transaction else { return [] }
        var keys: [RunKey] = []
        if givenUp != nil, event.kind == .span, let span = SpanID(spanUUID: event.id) {
            keys.append(RunKey(transaction: transaction, span: span.storedValue))
        }
        if let parent = event.parentSpan { keys.append(RunKey(transaction: transaction, span: parent.storedValue)) }
        return keys
    }
}
