public import Foundation
public import NFLogger
@_spi(NFLogShared) import NFLogSupport

/// A JSON object of the wire format, read field by field; each failure names the field's path
/// (`events[3].uuid`), as the collector's error bodies do. The walk and the paths are
/// NFLogSupport's `FieldReader` (the one the SDK reads its policy and configuration with); the
/// values are read as the SDK reads JSON values (`LogParameters(jsonObject:)`): `2` is an
/// integer and `2.0` a double, `true` a boolean and not `1`, so a batch the SDK wrote with the
/// wrong type is caught.
@_spi(NFLogShared) public struct WireObject {
    private let fields: FieldReader<WireFormatError>

    private init(_ fields: FieldReader<WireFormatError>) {
        self.fields = fields
    }

    /// Parses a whole document whose root must be an object.
    @_spi(NFLogShared) public init(json: [UInt8]) throws(WireFormatError) {
        let root: Any
        do { root = try JSONSerialization.jsonObject(with: Data(json)) } catch {
            throw WireFormatError(path: nil, "malformed JSON: \((error as NSError).localizedDescription)")
        }
        guard let members = root as? [String: Any] else { throw WireFormatError(path: nil, "the document must be an object") }
        self.init(FieldReader(members, failure: WireFormatError.init))
    }

    /// Where the object sits in its document; empty for the root.
    @_spi(NFLogShared) public var path: String { fields.objectPath }

    @_spi(NFLogShared) public func path(of key: String) -> String { fields.path(key) }

    /// The names of its members.
    @_spi(NFLogShared) public var keys: Dictionary<String, Any>.Keys { fields.keys }

    @_spi(NFLogShared) public func contains(_ key: String) -> Bool { fields.contains(key) }

    /// A member object's JSON text, to decode with a `Decodable` type of its own.
    @_spi(NFLogShared) public func json(_ key: String) throws(WireFormatError) -> Data {
        let value = try object(key).fields.rawObject
        do { return try JSONSerialization.data(withJSONObject: value) } catch {
            throw WireFormatError(path: path(of: key), "cannot be read back: \(error)")
        }
    }

    /// A member's value, read as the SDK reads JSON values.
    private func required(_ key: String) throws(WireFormatError) -> LogValue {
        guard let value = fields.raw(key) else { throw WireFormatError(path: path(of: key), "is missing") }
        return try Self.logValues([key: value], path: path)[key] ?? .null
    }

    /// An object's members as `LogValue`s, as the SDK reads them.
    private static func logValues(_ object: [String: Any], path: String) throws(WireFormatError) -> [String: LogValue] {
        let parameters: LogParameters
        do { parameters = try LogParameters(jsonObject: object) } catch {
            throw WireFormatError(path: path.isEmpty ? nil : path, "\(error)")
        }
        // LogValue(_:) of parameters is always an object.
        guard case .object(let values) = LogValue(parameters) else { return [:] }
        return values
    }

    @_spi(NFLogShared) public func string(_ key: String) throws(WireFormatError) -> String {
        guard case .string(let string) = try required(key) else { throw WireFormatError(path: path(of: key), "must be a string") }
        return string
    }

    @_spi(NFLogShared) public func uuid(_ key: String) throws(WireFormatError) -> UUID {
        guard let uuid = UUID(uuidString: try string(key)) else { throw WireFormatError(path: path(of: key), "must be a UUID") }
        return uuid
    }

    @_spi(NFLogShared) public func integer(_ key: String) throws(WireFormatError) -> Int64 {
        guard case .integer(let integer) = try required(key) else { throw WireFormatError(path: path(of: key), "must be an integer") }
        return integer
    }

    /// Unix milliseconds, as every time of the wire format is written.
    @_spi(NFLogShared) public func date(_ key: String) throws(WireFormatError) -> Date {
        let milliseconds = try integer(key)
        guard milliseconds >= 0 else { throw WireFormatError(path: path(of: key), "must not be negative") }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }

    @_spi(NFLogShared) public func optionalDate(_ key: String) throws(WireFormatError) -> Date? {
        contains(key) ? try date(key) : nil
    }

    /// An integer or a fraction.
    @_spi(NFLogShared) public func number(_ key: String) throws(WireFormatError) -> Double {
        switch try required(key) {
        case .integer(let integer): return Double(integer)
        case .double(let double): return double
        default: throw WireFormatError(path: path(of: key), "must be a number")
        }
    }

    @_spi(NFLogShared) public func optionalBool(_ key: String) throws(WireFormatError) -> Bool? {
        guard contains(key) else { return nil }
        guard case .bool(let bool) = try required(key) else { throw WireFormatError(path: path(of: key), "must be true or false") }
        return bool
    }

    @_spi(NFLogShared) public func object(_ key: String) throws(WireFormatError) -> WireObject {
        guard let object = try fields.object(key) else { throw WireFormatError(path: path(of: key), "is missing") }
        return WireObject(object)
    }

    @_spi(NFLogShared) public func optionalObject(_ key: String) throws(WireFormatError) -> WireObject? {
        try fields.object(key).map(WireObject.init)
    }

    /// The members of an optional object, as the SDK reads parameters; empty when it is absent.
    @_spi(NFLogShared) public func parameters(_ key: String) throws(WireFormatError) -> [String: LogValue] {
        guard let object = try optionalObject(key) else { return [:] }
        return try Self.logValues(object.fields.rawObject, path: object.path)
    }

    /// Each element of an array of objects.
    @_spi(NFLogShared) public func objects(_ key: String) throws(WireFormatError) -> [WireObject] {
        guard let objects = try fields.objects(key) else { throw WireFormatError(path: path(of: key), "is missing") }
        return objects.map(WireObject.init)
    }
}

extension WireFormatError {
    /// What the shared field reader found, as this error.
    init(_ problem: FieldProblem) {
        switch problem {
        case .missing(let path): self.init(path: path, "is missing")
        case .invalid(let path, let reason): self.init(path: path, reason)
        case .unknown(let path): self.init(path: path, "is not a field of the wire format")
        }
    }
}
