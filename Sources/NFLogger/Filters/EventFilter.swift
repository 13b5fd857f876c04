/// Changes, replaces or drops events before they are stored (Puree's filters): adds common
/// parameters, removes personal data, renames, splits one event into several.
///
/// Configure filters in ``Configuration/filters``. A filter applies to the point events and span
/// starts whose name matches its ``pattern``, and runs:
///
/// - **On the logger's queue**, never on the caller's thread: ``apply(_:)`` may take a few
///   microseconds, but every event of a burst waits for it, so keep it short and never block.
///   Never wait there for a completion of the logger's: it comes after the write the filter
///   holds up, so the wait would never end.
/// - **After** the mode, the rules, the sampling and the privacy zones have admitted the event
///   (on the caller's thread, under the name the app gave), and **before** the aggregator and the
///   database: an aggregate folds what the filters return, and what a filter removes never
///   reaches the database file.
/// - **In configuration order**: each filter sees what the filters before it returned, and
///   matches its pattern against the names they returned.
///
/// What ``apply(_:)`` returns decides the call's status:
///
/// - `[event]` (changed or not) stores that event, under the call's id.
/// - `[]` drops it: the call completes with ``LogStatus/filtered(_:)`` and
///   ``FilterReason/droppedByFilter(_:)`` naming the filter; nothing is stored.
/// - Several events replace it (at most 64): the first keeps the
///   call's id and its completion reports that event's status; the others get new ids, the same
///   time, session and transaction, and no completion of their own. A span start can only be
///   passed on, changed or dropped, never replaced by several events or by a point event.
/// - A returned name or type is checked with the rules of
///   ``NFLogger/logEvent(name:type:parameters:in:completion:)``: a bad one fails the call with
///   ``NFLoggerError/invalidName(_:reason:)`` or ``NFLoggerError/invalidType(_:reason:)``.
///
/// A filter that throws fails only the call it was applying to, with
/// ``NFLoggerError/filterFailed(filter:reason:)`` naming it; nothing of that call is stored, and
/// every other event written in the same transaction is stored as usual. A filter that traps
/// (a failed `precondition`, a force-unwrapped `nil`, an index out of range) cannot be caught:
/// like any trap in the app, it ends the process. Nothing the logger already reported
/// ``LogStatus/recorded(_:)`` is lost then (the write the filter ran for had not committed, and
/// its events had not been reported), but the events of that write are, and the app is gone.
///
/// Filters do not see the end of a span (``SpanHandle/end(parameters:completion:)``): it carries
/// the span's id, not its name. A ``ParameterRedactor`` is the exception: it redacts every span
/// end's parameters, whatever its pattern. A span whose start a filter dropped does not exist:
/// ending it completes with ``NFLoggerError/unknownSpan(_:)``.
///
/// ```swift
/// struct Rename: EventFilter {
///     let name = "rename-legacy"
///     let pattern = "legacy.**"
///     func apply(_ event: FilteredEvent) throws -> [FilteredEvent] {
///         var renamed = event
///         renamed.name = "app." + event.name.dropFirst("legacy.".count)
///         return [renamed]
///     }
/// }
/// ```
public protocol EventFilter: Sendable {
    /// Names the filter in statuses (``FilterReason/droppedByFilter(_:)``,
    /// ``NFLoggerError/filterFailed(filter:reason:)``): 1–64 bytes, unique among
    /// ``Configuration/filters``. Read once, when the logger starts.
    var name: String { get }
    /// The event names it applies to, as a tag pattern (see ``EventRules``): `**` for every
    /// event. Read once, when the logger starts.
    var pattern: String { get }
    /// Returns what to store in place of `event`: itself (changed or not), nothing, or several
    /// events. Called on the logger's queue; see ``EventFilter`` for what each answer and a
    /// thrown error do.
    func apply(_ event: FilteredEvent) throws -> [FilteredEvent]
}
