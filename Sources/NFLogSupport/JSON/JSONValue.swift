/// A parsed JSON document, as the collector's strict parser produces it.
///
/// Not `indirect`: arrays and ``JSONObject`` already hold their children out of line, and an
/// indirect enum would put every number and string in a heap box of its own.
@_spi(NFLogShared) public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A short name for error messages: "a string", "an object", ….
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON number: its Double value, and its exact integer value when it was written as one.
@_spi(NFLogShared) public struct JSONNumber: Sendable, Equatable {
    /// Set when the text was an integer (no fraction, no exponent) that fits in Int64.
    @_spi(NFLogShared) public let integer: Int64?
    @_spi(NFLogShared) public let double: Double
}

/// One member of a JSON object.
@_spi(NFLogShared) public struct JSONMember: Sendable, Equatable {
    @_spi(NFLogShared) public let key: String
    @_spi(NFLogShared) public let value: JSONValue
}

/// A JSON object: members in document order, and where it sits in the input, so that an object
/// such as an event's parameters can be stored verbatim without being re-encoded.
@_spi(NFLogShared) public struct JSONObject: Sendable, Equatable {
    @_spi(NFLogShared) public let members: [JSONMember]
    /// The object's bytes in the parsed input, braces included.
    @_spi(NFLogShared) public let range: Range<Int>

    @_spi(NFLogShared) public subscript(key: String) -> JSONValue? {
        // Lengths first: a string compare that fails takes its slow path (~35 instructions), and
        // most members a lookup passes differ in length (an event's decoding made ~70 compares).
        let count = key.utf8.count
        return members.first { $0.key.utf8.count == count && $0.key == key }?.value
    }

}
