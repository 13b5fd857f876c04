import Dispatch
import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The configured ``BestEffortOutput``s, each with its pattern and a serial queue of its own: after
/// a drain's write commits, each is handed the events it matches that were recorded (or that no
/// durable output took), in order, never on the caller's thread nor on the logger's queue. What
/// an output does with them, or whether it traps, cannot hold up or undo the write.
final class BestEffortOutputs: @unchecked Sendable {
    // @unchecked: `disabled` and the counts are read and written only on the RequestManager's
    // queue; the outputs, patterns and queues never change.
    private let outputs: [(output: any BestEffortOutput, pattern: TagPattern, queue: DispatchQueue)]
    /// The ids the policy switched off.
    var disabled: Set<String> = []
    /// Events handed to each output since the logger started, by id (for diagnostics).
    private(set) var handed: [String: Int] = [:]

    init(_ configured: [any Output]) {
        var outputs: [(output: any BestEffortOutput, pattern: TagPattern, queue: DispatchQueue)] = []
        for output in configured where !(output is any DurableOutput) && !(output is CollectorOutput) {
            // Validated with the configuration: every pattern parses.
            guard let bestEffort = output as? any BestEffortOutput, let pattern = try? TagPattern(output.pattern) else { continue }
            outputs.append((bestEffort, pattern, DispatchQueue(label: "nflog.output.\(output.id)")))
        }
        self.outputs = outputs
    }

    var isEmpty: Bool { outputs.isEmpty }

    var ids: [String] { outputs.map(\.output.id) }

    /// Hands out the point events and span starts of a committed write whose status says they
    /// were recorded (not folded into an aggregate) or that no durable output took them.
    func hand(_ requests: some Sequence<StorageRequest>, _ statuses: [LogStatus]) {
        var events: [OutputEvent] = []
        for (request, status) in zip(requests, statuses) {
            guard case .event(let record) = request else { continue }
            switch status {
            case .recorded where !status.isAggregated, .filtered(.noOutput): events.append(OutputEvent(record))
            default: continue
            }
        }
        guard !events.isEmpty else { return }
        for (output, pattern, queue) in outputs where !disabled.contains(output.id) {
            let matching = events.filter { pattern.matches($0.name) }
            guard !matching.isEmpty else { continue }
            handed[output.id, default: 0] += matching.count
            queue.async { output.emit(matching) }
        }
    }
}

extension OutputEvent {
    /// An event just written, as a best-effort output receives it: its wire JSON is what a
    /// collector would get (a span as started).
    init(_ record: EventRecord) {
        let stored = StoredEvent(kind: RecordKind(record.draft.kind), rowID: 0, id: record.id, sessionRowID: 0,
                                 name: record.draft.name, type: record.draft.type, parameters: record.draft.parameters,
                                 timestamp: record.draft.wallMilliseconds, end: nil, durationNanoseconds: nil, endParameters: nil,
                                 transaction: record.transaction, parentSpan: record.draft.link?.parentSpan,
                                 webOrigin: record.draft.link?.webOrigin)
        self.init(stored, json: BatchEncoder.event(stored, session: record.session.id))
    }
}
