public import Foundation

/// What a ``FieldReader`` found wrong with a field, by its full path; the reader's user turns it
/// into its own error type (the SDK's configuration file and the policy share one reader).
@_spi(NFLogShared) public enum FieldProblem: Sendable {
    case missing(String)
    case invalid(String, reason: String)
    case unknown(String)
}

/// Reads typed fields out of a JSON object (as `JSONSerialization` gives it), with errors that
/// name the field's full path.
@_spi(NFLogShared) public struct FieldReader<Failure: Error> {
    let object: [String: Any]
    let prefix: String
    let failure: (FieldProblem) -> Failure

    @_spi(NFLogShared) public init(_ object: [String: Any], prefix: String = "", failure: @escaping (FieldProblem) -> Failure) {
        self.object = object
        self.prefix = prefix
        self.failure = failure
    }

    @_spi(NFLogShared) public func path(_ key: String) -> String { prefix + key }

    /// Where this object sits in its document (`events[3]`); empty for the root.
    @_spi(NFLogShared) public var objectPath: String { prefix.hasSuffix(".") ? String(prefix.dropLast()) : prefix }

    /// The names of its members.
    @_spi(NFLogShared) public var keys: Dictionary<String, Any>.Keys { object.keys }

    @_spi(NFLogShared) public func contains(_ key: String) -> Bool { object[key] != nil }

    /// A member as `JSONSerialization` gave it, for a reader with typing of its own (NFLoggerTesting
    /// reads values as the SDK reads parameters); `nil` if absent.
    @_spi(NFLogShared) public func raw(_ key: String) -> Any? { object[key] }

    /// The whole object as `JSONSerialization` gave it.
    @_spi(NFLogShared) public var rawObject: [String: Any] { object }

    @_spi(NFLogShared) public func rejectUnknown(_ known: Set<String>) throws(Failure) {
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw failure(.unknown(path(unknown)))
        }
    }

    /// The value at `key`, `nil` if absent. A `null` is refused: optional fields are left out.
    private func present(_ key: String) throws(Failure) -> Any? {
        guard let value = object[key] else { return nil }
        if value is NSNull { throw failure(.invalid(path(key), reason: "must not be null (leave the field out instead)")) }
        return value
    }

    @_spi(NFLogShared) public func string(_ key: String) throws(Failure) -> String? {
        guard let value = try present(key) else { return nil }
        guard let string = value as? String else { throw failure(.invalid(path(key), reason: "must be a string")) }
        return string
    }

    @_spi(NFLogShared) public func requiredString(_ key: String) throws(Failure) -> String {
        guard let string = try string(key) else { throw failure(.missing(path(key))) }
        guard !string.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw failure(.invalid(path(key), reason: "must not be empty"))
        }
        return string
    }

    @_spi(NFLogShared) public func requiredURL(_ key: String) throws(Failure) -> URL {
        let text = try requiredString(key)
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw failure(.invalid(path(key), reason: "must be an http or https URL with a host, got \"\(text)\""))
        }
        return url
    }

    @_spi(NFLogShared) public func number(_ key: String) throws(Failure) -> Double? {
        guard let value = try present(key) else { return nil }
        // JSONSerialization gives booleans as NSNumbers, which `as? Double` would accept.
        guard let boxed = value as? NSNumber, type(of: boxed) != NSNumber.booleanClass,
              case let number = boxed.doubleValue, number.isFinite else {
            throw failure(.invalid(path(key), reason: "must be a number"))
        }
        return number
    }

    @_spi(NFLogShared) public func bool(_ key: String) throws(Failure) -> Bool? {
        guard let value = try present(key) else { return nil }
        guard let boxed = value as? NSNumber, type(of: boxed) == NSNumber.booleanClass else {
            throw failure(.invalid(path(key), reason: "must be true or false"))
        }
        return boxed.boolValue
    }

    @_spi(NFLogShared) public func integer(_ key: String) throws(Failure) -> Int? {
        guard let number = try number(key) else { return nil }
        guard number == number.rounded(), let integer = Int(exactly: number) else {
            throw failure(.invalid(path(key), reason: "must be a whole number"))
        }
        return integer
    }

    /// A duration in seconds (fractions allowed), 0…`max`.
    @_spi(NFLogShared) public func seconds(_ key: String, atMost max: Double) throws(Failure) -> TimeInterval? {
        guard let number = try number(key) else { return nil }
        guard (0...max).contains(number) else {
            throw failure(.invalid(path(key), reason: "must be between 0 and \(Int(max)) seconds"))
        }
        return number
    }

    @_spi(NFLogShared) public func stringArray(_ key: String) throws(Failure) -> [String]? {
        guard let value = try present(key) else { return nil }
        guard let array = value as? [Any], let strings = array as? [String] else {
            throw failure(.invalid(path(key), reason: "must be an array of strings"))
        }
        return strings
    }

    /// An array of objects, each read with its index in the path (`privacy_zones[2].latitude`).
    @_spi(NFLogShared) public func objects(_ key: String) throws(Failure) -> [FieldReader]? {
        guard let value = try present(key) else { return nil }
        guard let array = value as? [Any] else { throw failure(.invalid(path(key), reason: "must be an array of objects")) }
        var readers: [FieldReader] = []
        for (index, element) in array.enumerated() {
            guard let nested = element as? [String: Any] else { throw failure(.invalid("\(path(key))[\(index)]", reason: "must be an object")) }
            readers.append(FieldReader(nested, prefix: "\(path(key))[\(index)].", failure: failure))
        }
        return readers
    }

    @_spi(NFLogShared) public func object(_ key: String) throws(Failure) -> FieldReader? {
        guard let value = try present(key) else { return nil }
        guard let nested = value as? [String: Any] else { throw failure(.invalid(path(key), reason: "must be an object")) }
        return FieldReader(nested, prefix: path(key) + ".", failure: failure)
    }
}

extension NSNumber {
    /// The class Foundation uses for boolean NSNumbers (`__NSCFBoolean` on every platform): what
    /// tells `true` from `1` in JSON that `JSONSerialization` decoded.
    @_spi(NFLogShared) public static let booleanClass: AnyClass = type(of: NSNumber(value: true))
}
