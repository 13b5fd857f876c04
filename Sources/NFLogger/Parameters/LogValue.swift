/// A value JSON can carry: what an event's parameters are made of.
///
/// You rarely write `LogValue` yourself: strings, integers, doubles, booleans, optionals, arrays
/// and `[String: …]` dictionaries of those are ``LogValueConvertible`` and go straight into
/// ``LogParameters``. Write it where a literal mixes types inside an array or a nested object,
/// which Swift cannot infer on its own, and for an explicit JSON `null`:
///
/// ```swift
/// logger.logEvent(name: "ui.tap", parameters: [
///     "screen": screenName, "index": i, "tags": ["a", "b"],   // no wrapping
///     "mixed": ["a", 1] as LogValue,                          // a mixed array
///     "referrer": LogValue.null,
/// ])
/// ```
///
/// Doubles must be finite (JSON has no NaN or infinity): a non-finite one completes the call
/// with ``NFLoggerError/invalidParameter(key:reason:)``.
public enum LogValue: Sendable, Hashable {
    case string(String)
    /// Integers are written exactly; some JSON readers lose precision beyond 2^53.
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case null
    case array([LogValue])
    case object([String: LogValue])
}

extension LogValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
                    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
                    ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: LogValue...) { self = .array(elements) }
    /// A repeated key keeps its last value, as JSON readers do.
    public init(dictionaryLiteral elements: (String, LogValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension LogValue: ExpressibleByStringInterpolation {}

extension LogValue {
    /// An object of mixed values, to nest inside other parameters.
    public init(_ parameters: LogParameters) {
        var members: [String: LogValue] = [:]
        members.reserveCapacity(parameters.count)
        for (key, value) in parameters { members[key] = value.logValue }
        self = .object(members)
    }
}
