import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The two kinds of event an app logs, each with its own table.
enum EventKind: String, Sendable {
    case point
    case span
}

/// The kinds of record the database keeps for upload: the app's events, and the aggregates
/// that events matching a policy's `rules.aggregate` are folded into. Each has its own table.
enum RecordKind: String, Sendable, CaseIterable {
    case point
    case span
    case aggregate

    init(_ kind: EventKind) {
        switch kind {
        case .point: self = .point
        case .span: self = .span
        }
    }

    /// How `deliveries.kind` names the table of a record.
    var code: Int64 {
        switch self {
        case .point: 0
        case .span: 1
        case .aggregate: 2
        }
    }

    /// Among records of the same time, the order a batch lists them in.
    var order: Int {
        switch self {
        case .point: 0
        case .span: 1
        case .aggregate: 2
        }
    }
}

/// A validated, time-stamped event that has not yet been given its id and session.
/// Built on the caller's thread, which checks the name and stamps the time; the parameters are
/// encoded on the RequestManager's queue, just before the write.
struct EventDraft: Sendable {
    let kind: EventKind
    let name: String
    let type: String
    /// The parameters as a JSON object, or `nil` when there are none (set on the queue).
    var parameters: [UInt8]? = nil
    let wallMilliseconds: Int64
    let monotonicNanoseconds: UInt64
    /// Consent was pending when the call was admitted: the event is held (or, if consent was
    /// denied before it is written, dropped).
    var loggedWhilePending = false
    /// Where else it belongs, if anywhere (a transaction, a web page): a reference, so that the
    /// draft of an ordinary event stays as small (and as cheap to move through the queue) as
    /// before.
    var link: EventLink? = nil
}

/// An event's ties beyond its name and parameters: the transaction it belongs to and the span
/// it was logged under (docs/PROTOCOL.md, "Transactions"), or, for a transaction's own span,
/// that it begins one (its transaction id is its own id, known only once the queue gives it
/// one); and the web page that logged it through the ``ScriptBridge`` (docs/BRIDGE.md).
final class EventLink: Sendable {
    let transaction: UUID?
    let parentSpan: UInt64?
    let begins: Bool
    /// The page's origin (`scheme://host[:port]`) when web content logged it.
    let webOrigin: String?

    init(_ context: TransactionContext?, beginsTransaction: Bool = false, webOrigin: String? = nil) {
        transaction = beginsTransaction ? nil : context?.transactionID
        parentSpan = beginsTransaction ? nil : context?.parentSpanID
        begins = beginsTransaction
        self.webOrigin = webOrigin
    }

    static let beginsTransaction = EventLink(nil, beginsTransaction: true)
}

/// A point event or the start of a span, ready for its table.
struct EventRecord: Sendable {
    let id: UUID
    let session: Session
    var draft: EventDraft
    /// Recorded while consent is pending: kept back from upload, deleted if consent is denied.
    var held = false

    /// The transaction it belongs to: its own id for a transaction's span.
    var transaction: UUID? {
        guard let link = draft.link else { return nil }
        return link.begins ? id : link.transaction
    }
}

/// The end of a span, matched to its start by id on the RequestManager's queue.
struct SpanEnd: Sendable {
    let id: UUID
    /// Consent was pending when the end was admitted (see ``EventDraft/loggedWhilePending``).
    var loggedWhilePending = false
    /// The parameters as a JSON object, or `nil` when there are none (set on the queue).
    var parameters: [UInt8]? = nil
    let wallMilliseconds: Int64
    let monotonicNanoseconds: UInt64
}

/// One unit of work for the database, in the order the app made the calls.
enum StorageRequest: Sendable {
    case event(EventRecord)
    case endSpan(SpanEnd)
    /// An event a policy's `rules.aggregate` matched, to fold into its aggregate.
    case fold(Fold, Session)
    case sessionSuspended(Session, atMilliseconds: Int64)
    case sessionResumed(Session)
    /// The app set its consent: from here on, in the order of the calls.
    case consent(Consent, ConsentReceipt)

    /// Puts the encoded parameters into an event or a span's end.
    mutating func setParameters(_ encoded: [UInt8]?) {
        // `consume`: the payload moves out and back, rather than being copied (a retain of
        // each of its references) and the old one released.
        switch consume self {
        case .event(var record):
            record.draft.parameters = encoded
            self = .event(record)
        case .endSpan(var end):
            end.parameters = encoded
            self = .endSpan(end)
        case let other:
            self = other
        }
    }

    /// Whether this is an event (a point event or a span's start).
    var isEvent: Bool {
        if case .event = self { return true }
        return false
    }

    /// Whether this request answers an app's logging call (and so counts in diagnostics).
    var isLoggingCall: Bool {
        switch self {
        case .event, .endSpan, .fold: true
        case .sessionSuspended, .sessionResumed, .consent: false
        }
    }
}

/// A consent change on its way through the queue: where to save it, whom to tell, and what
/// it deleted.
/// Invariant (why it may be `@unchecked Sendable`): `deletedEvents` is written and read only on
/// the RequestManager's queue; the rest is immutable.
final class ConsentReceipt: @unchecked Sendable {
    let databaseURL: URL
    let completion: (@Sendable (Int) -> Void)?
    /// Events held while consent was pending that the change deleted (once committed).
    var deletedEvents = 0

    init(databaseURL: URL, completion: (@Sendable (Int) -> Void)?) {
        self.databaseURL = databaseURL
        self.completion = completion
    }
}

extension UUID {
    /// The 16 raw bytes, as stored in SQLite BLOB columns.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(of: uuid, body)
    }
}
