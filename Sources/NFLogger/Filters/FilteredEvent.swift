/// An event on its way through the ``EventFilter``s, before it is stored.
///
/// Change its ``name``, ``type`` and ``parameters`` in place, or create new point events with
/// ``init(name:type:parameters:)`` to replace it. The time, the session and the transaction
/// stay those of the call that logged it.
public struct FilteredEvent: Sendable {
    /// What the call logged.
    public enum Kind: Sendable, Equatable {
        /// A point event (``NFLogger/logEvent(name:type:parameters:in:completion:)``).
        case point
        /// The start of a span (``NFLogger/startEvent(name:type:parameters:in:completion:)``) or of
        /// a transaction.
        case spanStart
    }

    /// The event's name; checked again after the filter returns.
    public var name: String
    /// The event's type (`"event"` unless the call said otherwise); checked again after the
    /// filter returns.
    public var type: String
    /// The parameters, as the app gave them (or as the filters before changed them); encoded
    /// after the last filter.
    public var parameters: LogParameters
    /// What the call logged. A filter cannot turn one kind into the other.
    public let kind: Kind

    /// A point event, to return in place of (or besides) the one a filter was given.
    public init(name: String, type: String = "event", parameters: LogParameters = [:]) {
        self.init(kind: .point, name: name, type: type, parameters: parameters)
    }

    init(kind: Kind, name: String, type: String, parameters: LogParameters) {
        self.name = name
        self.type = type
        self.parameters = parameters
        self.kind = kind
    }
}
