import Foundation

/// The errors a ``FieldReader`` reports, so the configuration file and the policy share one reader.
protocol FieldReaderError: Error {
    static func missing(_ field: String) -> Self
    static func invalid(_ field: String, _ reason: String) -> Self
    static func unknown(_ field: String) -> Self
}

/// Reads typed fields out of a JSON object (as `JSONSerialization` gives it), with errors that
/// name the field's full path.
struct FieldReader<Failure: FieldReaderError> {
    let object: [String: Any]
    let prefix: String

    init(_ object: [String: Any], prefix: String = "") {
        self.object = object
        self.prefix = prefix
    }

    func path(_ key: String) -> String { prefix + key }

    func rejectUnknown(_ known: Set<String>) throws(Failure) {
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw .unknown(path(unknown))
        }
    }

    /// The value at `key`, `nil` if absent. A `null` is refused: optional fields are left out.
    private func present(_ key: String) throws(Failure) -> Any? {
        guard let value = object[key] else { return nil }
        if value is NSNull { throw .invalid(path(key), "must not be null (leave the field out instead)") }
        return value
    }

    func string(_ key: String) throws(Failure) -> String? {
        guard let value = try present(key) else { return nil }
        guard let string = value as? String else { throw .invalid(path(key), "must be a string") }
        return string
    }

    func requiredString(_ key: String) throws(Failure) -> String {
        guard let string = try string(key) else { throw .missing(path(key)) }
        guard !string.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalid(path(key), "must not be empty")
        }
        return string
    }

    func requiredURL(_ key: String) throws(Failure) -> URL {
        let text = try requiredString(key)
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw .invalid(path(key), "must be an http or https URL with a host, got \"\(text)\"")
        }
        return url
    }

    func number(_ key: String) throws(Failure) -> Double? {
        guard let value = try present(key) else { return nil }
        // JSONSerialization gives booleans as NSNumbers, which `as? Double` would accept.
        guard let boxed = value as? NSNumber, type(of: boxed) != NSNumber.booleanClass,
              case let number = boxed.doubleValue, number.isFinite else {
            throw .invalid(path(key), "must be a number")
        }
        return number
    }

    func bool(_ key: String) throws(Failure) -> Bool? {
        guard let value = try present(key) else { return nil }
        guard let boxed = value as? NSNumber, type(of: boxed) == NSNumber.booleanClass else {
            throw .invalid(path(key), "must be true or false")
        }
        return boxed.boolValue
    }

    func integer(_ key: String) throws(Failure) -> Int? {
        guard let number = try number(key) else { return nil }
        guard number == number.rounded(), let integer = Int(exactly: number) else {
            throw .invalid(path(key), "must be a whole number")
        }
        return integer
    }

    /// A duration in seconds (fractions allowed), at most a week.
    func seconds(_ key: String) throws(Failure) -> TimeInterval? {
        guard let number = try number(key) else { return nil }
        guard (0...Configuration.maxIdleTimeoutSeconds).contains(number) else {
            throw .invalid(path(key), "must be between 0 and \(Int(Configuration.maxIdleTimeoutSeconds)) seconds")
        }
        return number
    }

    func stringArray(_ key: String) throws(Failure) -> [String]? {
        guard let value = try present(key) else { return nil }
        guard let array = value as? [Any], let strings = array as? [String] else {
            throw .invalid(path(key), "must be an array of strings")
        }
        return strings
    }

    /// An array of objects, each read with its index in the path (`privacy_zones[2].latitude`).
    func objects(_ key: String) throws(Failure) -> [FieldReader]? {
        guard let value = try present(key) else { return nil }
        guard let array = value as? [Any] else { throw .invalid(path(key), "must be an array of objects") }
        var readers: [FieldReader] = []
        for (index, element) in array.enumerated() {
            guard let nested = element as? [String: Any] else { throw .invalid("\(path(key))[\(index)]", "must be an object") }
            readers.append(FieldReader(nested, prefix: "\(path(key))[\(index)]."))
        }
        return readers
    }

    func object(_ key: String) throws(Failure) -> FieldReader? {
        guard let value = try present(key) else { return nil }
        guard let nested = value as? [String: Any] else { throw .invalid(path(key), "must be an object") }
        return FieldReader(nested, prefix: path(key) + ".")
    }
}
