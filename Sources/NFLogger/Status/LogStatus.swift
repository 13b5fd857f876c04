public import Foundation

/// What became of one logging call. Every completion handler receives exactly one.
///
/// Frozen by design: these four outcomes are the SDK's promise, and an exhaustive `switch` over
/// them will keep compiling. Their reasons and errors may grow (see <doc:SourceStability>).
public enum LogStatus: Sendable, Equatable, CustomStringConvertible {
    /// The event is committed to the SDK's SQLite database under this id. A crash of the app
    /// after this point does not lose it; it stays on the device until a collector confirms it.
    ///
    /// When a policy's `rules.aggregate` matched the event, it was folded into an aggregate
    /// rather than stored alone, and the id is the aggregate's, shared by every event folded
    /// into it (``isAggregated`` tells).
    case recorded(UUID)
    /// The current mode, policy or consent, or one of the app's ``EventFilter``s, chose not to
    /// record the event.
    case filtered(FilterReason)
    /// The SDK is in ``LogMode/disabled`` mode; nothing was validated or stored.
    case disabled
    /// The event was not recorded; the error says why and what to fix.
    case failed(NFLoggerError)

    /// `true` for ``recorded(_:)``.
    public var isRecorded: Bool {
        if case .recorded = self { return true }
        return false
    }

    /// `true` for ``recorded(_:)`` when the event was folded into an aggregate (its id is then
    /// the aggregate's, a UUIDv8; an event's own id is a UUIDv7).
    public var isAggregated: Bool {
        if case .recorded(let id) = self { return id.uuid.6 >> 4 == 8 }
        return false
    }

    public var description: String {
        switch self {
        case .recorded(let id): "\(isAggregated ? "aggregated into" : "recorded") \(id.uuidString.lowercased())"
        case .filtered(let reason): "filtered (\(reason))"
        case .disabled: "disabled"
        case .failed(let error): "failed: \(error)"
        }
    }
}

/// Why an event was filtered rather than recorded.
///
/// New cases may come in any minor release (see <doc:SourceStability>): a `switch` over it
/// needs a `default`.
public enum FilterReason: Sendable, Equatable, CustomStringConvertible {
    /// ``LogMode/specific(_:)`` is in force and no pattern of its allow list selects the name.
    case notSelected
    /// A deny pattern (from the rules or the policy) matches the name.
    case denied
    /// The policy samples this event and this install is not in the sample.
    case sampledOut
    /// The app's location (``NFLogger/updateLocation(latitude:longitude:)``) is inside one of the
    /// policy's privacy zones.
    case insidePrivacyZone
    /// The policy requires a newer SDK than this one; it is off until the app updates.
    case sdkBelowMinimumVersion
    /// The user denied consent (``NFLogger/consent`` is ``Consent/denied``).
    case consentDenied
    /// No enabled durable output takes the event's name (``Configuration/outputs``,
    /// ``Configuration/collectorPattern``, the policy's `outputs.disabled`): nothing keeps it.
    /// Best-effort outputs that match are still handed it.
    case noOutput
    /// The ``EventFilter`` with this name (``EventFilter/name``) dropped the event: it returned
    /// no event in its place.
    case droppedByFilter(String)

    public var description: String {
        switch self {
        case .notSelected: "not selected by the specific-mode rules"
        case .denied: "denied by the rules"
        case .sampledOut: "this install is not in the sample for this event"
        case .insidePrivacyZone: "inside a privacy zone"
        case .sdkBelowMinimumVersion: "the policy requires a newer SDK"
        case .consentDenied: "the user denied consent"
        case .noOutput: "no enabled durable output takes this event"
        case .droppedByFilter(let filter): "dropped by the filter \"\(filter)\""
        }
    }
}
