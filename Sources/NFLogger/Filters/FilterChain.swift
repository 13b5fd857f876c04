import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The configured ``EventFilter``s, applied to a drained batch on the RequestManager's queue,
/// before the aggregator folds it and the database writes it.
///
/// Lives on that queue (it is mutated only there: its id generator); the RequestManager skips it
/// entirely when no filter is configured (``isEmpty``), so an app without filters pays nothing.
struct FilterChain {
    /// The most events one call may become: a filter that fans out further fails the call.
    static let maxEventsPerCall = 64
    /// The longest error text kept in ``NFLoggerError/filterFailed(filter:reason:)``.
    static let maxReasonLength = 512

    private struct Entry {
        let filter: any EventFilter
        let name: String
        let pattern: TagPattern
    }

    private let entries: [Entry]
    /// Redact every span end's parameters, whatever their patterns (see ``ParameterRedactor``).
    private let spanEndRedactors: [ParameterRedactor]
    /// The ids of the events a filter adds (a call's own event keeps the id it was given under
    /// the pending lock).
    private var ids = EventIDGenerator()

    /// Reads each filter's name and pattern once. A pattern that does not parse (which
    /// ``Configuration/validate()`` already refused) leaves its filter out.
    init(_ filters: [any EventFilter]) {
        entries = filters.compactMap { filter in
            guard let pattern = try? TagPattern(filter.pattern) else { return nil }
            return Entry(filter: filter, name: filter.name, pattern: pattern)
        }
        spanEndRedactors = entries.compactMap { $0.filter as? ParameterRedactor }
    }

    var isEmpty: Bool { entries.isEmpty }

    /// What the filters made of one call's event.
    private enum Outcome {
        /// No filter's pattern matched: the request stays as it was.
        case untouched
        case replaced([FilteredEvent])
        /// Dropped or failed: the call completes with this, and nothing of it is written.
        case settled(LogStatus)
    }

    /// Applies the filters to every point event and span start of `batch` (and the redactors to
    /// every span end). An event replaced by several is followed in `batch` by the others, which
    /// have no completion.
    /// - Returns: the status of each request that must not be written (dropped, or failed), by
    ///   its index in `batch` as it is on return.
    mutating func apply(to batch: inout [RequestManager.PendingRequest]) -> [Int: LogStatus] {
        var settled: [Int: LogStatus] = [:]
        var added: [Int: [RequestManager.PendingRequest]] = [:]
        for index in batch.indices {
            switch batch[index].request {
            case .event(let record):
                let kind: FilteredEvent.Kind = record.draft.kind == .span ? .spanStart : .point
                let event = FilteredEvent(kind: kind, name: record.draft.name, type: record.draft.type,
                                          parameters: batch[index].parameters)
                switch run(event) {
                case .untouched: continue
                case .settled(let status):
                    settled[index] = status
                    batch[index].parameters = [:]
                case .replaced(let events):
                    batch[index].request = .event(Self.record(record, as: events[0], id: record.id))
                    batch[index].parameters = events[0].parameters
                    guard events.count > 1 else { continue }
                    added[index] = events.dropFirst().map { event in
                        let id = ids.make(milliseconds: record.draft.wallMilliseconds)
                        return RequestManager.PendingRequest(request: .event(Self.record(record, as: event, id: id)),
                                                             parameters: event.parameters, completion: nil)
                    }
                }
            case .endSpan where !spanEndRedactors.isEmpty && !batch[index].parameters.isEmpty:
                for redactor in spanEndRedactors { batch[index].parameters = redactor.redact(batch[index].parameters) }
            case .endSpan, .fold, .sessionSuspended, .sessionResumed, .consent:
                continue
            }
        }
        guard !added.isEmpty else { return settled }
        // Insert the added events after the event they came from, and move the statuses to the
        // indices they then have.
        var expanded: [RequestManager.PendingRequest] = []
        expanded.reserveCapacity(batch.count + added.values.reduce(0) { $0 + $1.count })
        var moved: [Int: LogStatus] = [:]
        for index in batch.indices {
            if let status = settled[index] { moved[expanded.count] = status }
            expanded.append(batch[index])
            if let more = added[index] { expanded.append(contentsOf: more) }
        }
        batch = expanded
        return moved
    }

    /// Runs `original` through every filter whose pattern matches, in order, from the first that
    /// matches its name.
    private func run(_ original: FilteredEvent) -> Outcome {
        // Most events match no filter: they cost one match per filter, and no allocation.
        guard let first = entries.firstIndex(where: { $0.pattern.matches(original.name) }) else { return .untouched }
        var events = [original]
        for entry in entries[first...] {
            var next: [FilteredEvent] = []
            next.reserveCapacity(events.count)
            for event in events {
                guard entry.pattern.matches(event.name) else {
                    next.append(event)
                    continue
                }
                do {
                    next.append(contentsOf: try entry.filter.apply(event))
                } catch {
                    return .settled(.failed(Self.failure(entry, String(describing: error))))
                }
            }
            if next.isEmpty { return .settled(.filtered(.droppedByFilter(entry.name))) }
            if let problem = Self.problem(in: next, from: original.kind, entry: entry) { return .settled(.failed(problem)) }
            events = next
        }
        return .replaced(events)
    }

    /// Why what a filter returned cannot be stored, if it cannot: a bad name or type (with the
    /// errors of the caller's thread), too many events, or a span start turned into something else.
    private static func problem(in events: [FilteredEvent], from kind: FilteredEvent.Kind, entry: Entry) -> NFLoggerError? {
        if kind == .spanStart {
            if events.count > 1 { return failure(entry, "a span cannot be replaced by several events") }
            if events[0].kind != .spanStart { return failure(entry, "a span start cannot be replaced by a point event") }
        } else if events.count > maxEventsPerCall {
            return failure(entry, "returned \(events.count) events for one, more than \(maxEventsPerCall)")
        }
        for event in events {
            do {
                try EventName.validateName(event.name)
                try EventName.validateType(event.type)
            } catch {
                return error
            }
        }
        return nil
    }

    private static func failure(_ entry: Entry, _ reason: String) -> NFLoggerError {
        .filterFailed(filter: entry.name, reason: String(reason.prefix(maxReasonLength)))
    }

    /// `record` with the name and type a filter returned, under `id`; the time, session,
    /// transaction and consent state stay the call's.
    private static func record(_ record: EventRecord, as event: FilteredEvent, id: UUID) -> EventRecord {
        let original = record.draft
        // The kind stays the call's: ``problem(in:from:entry:)`` refused a span start turned into
        // a point event, and what replaces a point event is stored as point events.
        let draft = EventDraft(kind: original.kind, name: event.name, type: event.type, parameters: nil,
                               wallMilliseconds: original.wallMilliseconds, monotonicNanoseconds: original.monotonicNanoseconds,
                               loggedWhilePending: original.loggedWhilePending, link: original.link)
        var result = EventRecord(id: id, session: record.session, draft: draft)
        result.held = record.held
        return result
    }
}
