/// A type whose values can be event parameters.
///
/// The standard library's `String`, `Substring`, `Bool`, `Double`, `Float`, the signed integers
/// and `UInt8`…`UInt32` (whatever fits in `Int64`), and optionals, arrays and `[String: …]`
/// dictionaries of conforming values already conform, as does ``LogValue``. Conform your own
/// type by saying which JSON it is:
///
/// ```swift
/// extension Plan: LogValueConvertible {
///     var logValue: LogValue { ["id": .string(id), "seats": .integer(Int64(seats))] }
/// }
/// ```
public protocol LogValueConvertible: Sendable {
    /// The value as JSON. Read on the logger's queue, once per call.
    var logValue: LogValue { get }
    /// About how many bytes the value takes as JSON, for the bound on what waits in memory for
    /// the logger's queue (``Configuration/Limits/maxPendingBytes``). Read on the caller's
    /// thread, so it must be cheap: the standard types look at a string's length and a
    /// container's first element, never walk the whole. An app's own types count 16 (the
    /// encoded size is checked on the queue all the same). Not API: a requirement so that the
    /// standard types' estimate is a direct call, not a cast.
    @_spi(NFLogShared) var approximateJSONBytes: Int { get }
}

extension LogValueConvertible {
    @_spi(NFLogShared) public var approximateJSONBytes: Int { 16 }
}

extension LogValue: LogValueConvertible {
    public var logValue: LogValue { self }

    @_spi(NFLogShared) public var approximateJSONBytes: Int {
        switch self {
        case .string(let string): string.utf8.count + 2
        case .array(let elements): 2 + elements.count * (1 + (elements.first?.approximateJSONBytes ?? 0))
        case .object(let members): 2 + members.count * (16 + (members.first?.value.approximateJSONBytes ?? 0))
        case .integer, .double, .bool, .null: 16
        }
    }
}

extension String: LogValueConvertible {
    public var logValue: LogValue { .string(self) }
    @_spi(NFLogShared) public var approximateJSONBytes: Int { utf8.count + 2 }
}

extension Substring: LogValueConvertible {
    public var logValue: LogValue { .string(String(self)) }
    @_spi(NFLogShared) public var approximateJSONBytes: Int { utf8.count + 2 }
}

extension Bool: LogValueConvertible {
    public var logValue: LogValue { .bool(self) }
}

extension Double: LogValueConvertible {
    public var logValue: LogValue { .double(self) }
}

extension Float: LogValueConvertible {
    /// Through the Float's own shortest text, so `1.1` is sent as 1.1, not 1.100000023841858.
    public var logValue: LogValue { .double(Double(description) ?? Double(self)) }
}

extension Int: LogValueConvertible {
    public var logValue: LogValue { .integer(Int64(self)) }
}

extension Int8: LogValueConvertible {
    public var logValue: LogValue { .integer(Int64(self)) }
}

extension Int16: LogValueConvertible {
    public var logValue: LogValue { .integer(Int64(self)) }
}

extension Int32: LogValueConvertible {
    public var logValue: LogValue { .integer(Int64(self)) }
}

extension Int64: LogValueConvertible {
    public var logValue: LogValue { .integer(self) }
}

extension UInt8: LogValueConvertible {
    public var logValue: LogValue { .integer(Int64(self)) }
}

extension UInt16: LogValueConvertible {
    public var logValue: LogValue { .integer(Int64(self)) }
}

extension UInt32: LogValueConvertible {
    public var logValue: LogValue { .integer(Int64(self)) }
}

// `UInt` and `UInt64` do not conform: their values need not fit in `Int64`, and the compiler,
// not a run-time check, is what keeps parameters JSON-compatible.

extension Optional: LogValueConvertible where Wrapped: LogValueConvertible {
    /// `nil` is JSON `null`.
    public var logValue: LogValue { map(\.logValue) ?? .null }
    @_spi(NFLogShared) public var approximateJSONBytes: Int { self?.approximateJSONBytes ?? 4 }
}

extension Array: LogValueConvertible where Element: LogValueConvertible {
    public var logValue: LogValue { .array(map(\.logValue)) }
    /// The first element's size times the count: O(1).
    @_spi(NFLogShared) public var approximateJSONBytes: Int { 2 + count * (1 + (first?.approximateJSONBytes ?? 0)) }
}

extension Dictionary: LogValueConvertible where Key == String, Value: LogValueConvertible {
    public var logValue: LogValue { .object(mapValues(\.logValue)) }
    /// The first member's size times the count: O(1).
    @_spi(NFLogShared) public var approximateJSONBytes: Int { 2 + count * (16 + (first?.value.approximateJSONBytes ?? 0)) }
}
