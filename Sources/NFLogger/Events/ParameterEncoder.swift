import Foundation
import NFLogSupport

/// Validates event parameters and encodes them as a JSON object, in one pass on the caller's
/// thread, so that a bad parameter is reported to the caller and nothing reaches storage.
///
/// Accepted values: `String`, `Bool`, the integer types (within `Int64`), finite `Double` and
/// `Float`, `nil` or `NSNull`, arrays of these and dictionaries with `String` keys, nested up to
/// ``maxDepth`` levels.
struct ParameterEncoder: Sendable {
    /// The largest encoded object accepted, in bytes.
    let maxBytes: Int
    static let maxDepth = 32
    static let maxKeyBytes = 256

    /// Returns the JSON encoding, or `nil` for no parameters.
    func encode(_ parameters: [String: Any]) throws(NFLoggerError) -> [UInt8]? {
        if parameters.isEmpty { return nil }
        var writer = JSONWriter(capacity: 16 + parameters.count * 32, maxBytes: maxBytes)
        do {
            try writer.writeObject(parameters, depth: 1)
            try writer.checkSize()
        } catch {
            throw error.loggerError
        }
        return writer.bytes
    }
}

/// A parameter problem on its way up to the top level, collecting the key path as it goes.
struct ParameterFailure: Error {
    var path: [String]
    let reason: String
    var tooLarge: (bytes: Int, limit: Int)?

    var loggerError: NFLoggerError {
        if let tooLarge { return .parametersTooLarge(bytes: tooLarge.bytes, limit: tooLarge.limit) }
        var key = ""
        for component in path.reversed() {
            if component.hasPrefix("[") || key.isEmpty { key += component } else { key += "." + component }
        }
        return .invalidParameter(key: key, reason: reason)
    }

    func under(_ component: String) -> ParameterFailure {
        var copy = self
        copy.path.append(component)
        return copy
    }
}

/// A value that can appear in event parameters and knows how to write itself as JSON.
protocol ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure)
}

extension JSONWriter {
    mutating func writeValue(_ value: Any, depth: Int) throws(ParameterFailure) {
        // The common types first, matched by their exact type: a cast to a protocol walks the
        // runtime's conformance tables and was most of the log call's cost (perf, issue 7).
        // Matching the exact type also keeps NSNumber out of these branches (no bridging).
        let valueType = type(of: value)
        if valueType == String.self, let string = value as? String { return writeString(string) }
        if valueType == Int.self, let integer = value as? Int { return writeInteger(Int64(integer)) }
        if valueType == Double.self, let double = value as? Double { return try double.write(to: &self, depth: depth) }
        if valueType == Bool.self, let bool = value as? Bool { return try bool.write(to: &self, depth: depth) }
        guard let value = value as? any ParameterValue else {
            throw ParameterFailure(path: [], reason: "values of type \(type(of: value)) are not JSON-compatible; use String, Int, Double, Bool, nil, arrays or [String: Any]")
        }
        try value.write(to: &self, depth: depth)
    }

    mutating func writeObject<Value>(_ object: [String: Value], depth: Int) throws(ParameterFailure) {
        guard depth <= ParameterEncoder.maxDepth else {
            throw ParameterFailure(path: [], reason: "nested deeper than \(ParameterEncoder.maxDepth) levels")
        }
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in object {
            if key.isEmpty || key.utf8.count > ParameterEncoder.maxKeyBytes {
                throw ParameterFailure(path: [key], reason: "keys must be 1…\(ParameterEncoder.maxKeyBytes) bytes")
            }
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            writeString(key)
            bytes.append(UInt8(ascii: ":"))
            do {
                try writeValue(value, depth: depth + 1)
            } catch {
                throw error.under(key)
            }
            try checkSize()
        }
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func writeArray(_ elements: some Collection, depth: Int) throws(ParameterFailure) {
        guard depth <= ParameterEncoder.maxDepth else {
            throw ParameterFailure(path: [], reason: "nested deeper than \(ParameterEncoder.maxDepth) levels")
        }
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            do {
                try writeValue(element, depth: depth + 1)
            } catch {
                throw error.under("[\(index)]")
            }
            try checkSize()
        }
        bytes.append(UInt8(ascii: "]"))
    }

    func checkSize() throws(ParameterFailure) {
        if bytes.count > maxBytes {
            // The real size is unknown (we stopped early); report what was written so far.
            throw ParameterFailure(path: [], reason: "", tooLarge: (bytes.count, maxBytes))
        }
    }
}

// MARK: - The accepted types

extension String: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) { writer.writeString(self) }
}

extension Substring: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) { writer.writeString(String(self)) }
}

extension Bool: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        if self { writer.writeLiteral("true") } else { writer.writeLiteral("false") }
    }
}

/// Integers are written exactly; JSON readers may lose precision past 2^53, which the protocol notes.
protocol IntegerParameterValue: ParameterValue, BinaryInteger {}
extension IntegerParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        guard let value = Int64(exactly: self) else {
            throw ParameterFailure(path: [], reason: "\(self) does not fit in a 64-bit signed integer")
        }
        writer.writeInteger(value)
    }
}
extension Int: IntegerParameterValue {}
extension Int8: IntegerParameterValue {}
extension Int16: IntegerParameterValue {}
extension Int32: IntegerParameterValue {}
extension Int64: IntegerParameterValue {}
extension UInt: IntegerParameterValue {}
extension UInt8: IntegerParameterValue {}
extension UInt16: IntegerParameterValue {}
extension UInt32: IntegerParameterValue {}
extension UInt64: IntegerParameterValue {}

extension Double: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        guard isFinite else { throw ParameterFailure(path: [], reason: "\(self) is not a finite number; JSON has no NaN or infinity") }
        // Swift prints the shortest text that reads back as the same Double, always valid JSON.
        writer.writeNumber(description)
    }
}

extension Float: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        guard isFinite else { throw ParameterFailure(path: [], reason: "\(self) is not a finite number; JSON has no NaN or infinity") }
        writer.writeNumber(description)
    }
}

/// Numbers from `JSONSerialization` and Objective-C APIs arrive as `NSNumber`.
extension NSNumber: ParameterValue {
    /// The class Foundation uses for boolean NSNumbers (`__NSCFBoolean` on every platform).
    static let booleanClass: AnyClass = type(of: NSNumber(value: true))

    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        if type(of: self) == Self.booleanClass {
            return try boolValue.write(to: &writer, depth: depth)
        }
        switch UInt8(bitPattern: objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            try doubleValue.write(to: &writer, depth: depth)
        case UInt8(ascii: "C"), UInt8(ascii: "S"), UInt8(ascii: "I"), UInt8(ascii: "L"), UInt8(ascii: "Q"):
            try uint64Value.write(to: &writer, depth: depth)
        default:
            try int64Value.write(to: &writer, depth: depth)
        }
    }
}

extension NSNull: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) { writer.writeLiteral("null") }
}

extension Optional: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        switch self {
        case .none: writer.writeLiteral("null")
        case .some(let wrapped): try writer.writeValue(wrapped, depth: depth)
        }
    }
}

extension Array: ParameterValue {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        try writer.writeArray(self, depth: depth)
    }
}

extension Dictionary: ParameterValue where Key == String {
    func write(to writer: inout JSONWriter, depth: Int) throws(ParameterFailure) {
        try writer.writeObject(self, depth: depth)
    }
}
