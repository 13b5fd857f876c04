import Foundation
import NFLogger
import Synchronization

/// Counts what every completion said, keeps the ids recorded in this run (for the audit), and
/// appends them to the receipts file if one was asked for.
final class Tally: Sendable {
    struct Counts: Sendable {
        var calls = 0, recorded = 0, disabled = 0, failed = 0
        /// Of `recorded`: events folded into aggregates (a policy's `rules.aggregate`).
        var aggregated = 0
        /// Of `recorded`: span and transaction ends, each a call of its own that completes with
        /// its start's id (so `recorded` = events + span ends + aggregated).
        var spanEnds = 0
        var filtered: [String: Int] = [:]
        /// Of `failed`: how many failed with each error, by its description.
        var failures: [String: Int] = [:]
        var filteredTotal: Int { filtered.values.reduce(0, +) }
    }

    private let state = Mutex<(counts: Counts, ids: [UUID], seen: Set<UUID>, aggregates: Set<UUID>)>((Counts(), [], [], []))
    private let receipts: FileHandle?

    init(receiptsPath: String?) throws {
        if let receiptsPath {
            if !FileManager.default.fileExists(atPath: receiptsPath) {
                _ = FileManager.default.createFile(atPath: receiptsPath, contents: nil)
            }
            guard let handle = FileHandle(forWritingAtPath: receiptsPath) else {
                throw DemoError("cannot open the receipts file \(receiptsPath)")
            }
            handle.seekToEndOfFile()
            receipts = handle
        } else {
            receipts = nil
        }
    }

    var completion: LogCompletion { { status in self.note(status) } }

    func note(_ status: LogStatus) {
        // Failures are told apart by kind: the ids in their descriptions are left out.
        let failure = if case .failed(let error) = status {
            "\(error)".replacing(#/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/#, with: "…")
        } else { "" }
        state.withLock { state in
            state.counts.calls += 1
            switch status {
            case .recorded(let id) where status.isAggregated:
                // Folded: the id is its aggregate's, audited through the collector's aggregates
                // (receipts list events stored alone).
                state.counts.recorded += 1
                state.counts.aggregated += 1
                state.aggregates.insert(id)
            case .recorded(let id):
                state.counts.recorded += 1
                // A span's end reports its start's id again: one receipt per event, written as
                // soon as its first completion says it is recorded.
                if state.seen.insert(id).inserted {
                    state.ids.append(id)
                    receipts?.write(Data((id.uuidString.lowercased() + "\n").utf8))
                } else {
                    state.counts.spanEnds += 1
                }
            case .filtered(let reason): state.counts.filtered[Self.name(reason), default: 0] += 1
            case .disabled: state.counts.disabled += 1
            case .failed:
                state.counts.failed += 1
                state.counts.failures[failure, default: 0] += 1
            }
        }
    }

    static func name(_ reason: FilterReason) -> String {
        switch reason {
        case .notSelected: "not selected"
        case .denied: "denied"
        case .sampledOut: "sampled out"
        case .insidePrivacyZone: "privacy zone"
        case .sdkBelowMinimumVersion: "SDK too old"
        case .consentDenied: "consent denied"
        case .droppedByFilter: "dropped by a filter"
        default: "\(reason)"  // FilterReason grows (SourceStability)
        }
    }

    var counts: Counts { state.withLock { $0.counts } }
    var recordedIDs: [UUID] { state.withLock { $0.ids } }
    /// The aggregates events were folded into.
    var aggregateIDs: Set<UUID> { state.withLock { $0.aggregates } }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
