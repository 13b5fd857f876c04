import Foundation
@_spi(NFLogShared) import NFLogSupport

extension LogParameters {
    /// Converts a dictionary from `JSONSerialization` (or any `[String: Any]` of JSON values)
    /// into parameters, checking every value.
    ///
    /// Accepted: `String`, `NSNumber` (booleans, integers within `Int64`, finite doubles), the
    /// Swift number types and `Bool`, `NSNull`, arrays and `[String: Any]` dictionaries of
    /// these, nested at most 32 levels.
    ///
    /// - Throws: ``NFLoggerError/invalidParameter(key:reason:)`` naming the first offending
    ///   value by its path, such as `user.tags[2]`.
    public init(jsonObject: [String: Any]) throws(NFLoggerError) {
        // A dictionary's keys are distinct: appended as they come, without a lookup each (a page
        // on the web bridge can send thousands, converted on the thread that calls the bridge).
        var members: [Member] = []
        members.reserveCapacity(jsonObject.count)
        for (key, value) in jsonObject {
            do {
                // Depth as the encoder counts it: the parameters object is level 1.
                members.append((key, try JSONObjectConversion.value(value, depth: 2)))
            } catch {
                throw error.under(key).loggerError
            }
        }
        self.init(distinct: members)
    }
}

/// The checks behind ``LogParameters/init(jsonObject:)``: dynamic casts, but only for input
/// that arrives untyped (the JavaScript bridge, decoded files), never on the log call's path.
enum JSONObjectConversion {
    static func value(_ value: Any, depth: Int) throws(ParameterFailure) -> LogValue {
        // A Swift Float would bridge to NSNumber below and lose its shortest text.
        if type(of: value) == Float.self, let float = value as? Float { return float.logValue }
        switch value {
        case let string as String: return .string(string)
        case let number as NSNumber: return try self.number(number)
        case is NSNull: return .null
        case let array as [Any]:
            try checkDepth(depth)
            var elements: [LogValue] = []
            elements.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                do { elements.append(try self.value(element, depth: depth + 1)) } catch { throw error.under("[\(index)]") }
            }
            return .array(elements)
        case let object as [String: Any]:
            try checkDepth(depth)
            var members: [String: LogValue] = [:]
            members.reserveCapacity(object.count)
            for (key, member) in object {
                do { members[key] = try self.value(member, depth: depth + 1) } catch { throw error.under(key) }
            }
            return .object(members)
        case let convertible as any LogValueConvertible:
            return convertible.logValue
        default:
            throw ParameterFailure(path: [], reason: "values of type \(type(of: value)) are not JSON-compatible")
        }
    }

    /// Containers only, as the encoder checks: a scalar adds no level.
    private static func checkDepth(_ depth: Int) throws(ParameterFailure) {
        guard depth <= ParameterEncoder.maxDepth else {
            throw ParameterFailure(path: [], reason: "nested deeper than \(ParameterEncoder.maxDepth) levels")
        }
    }

    private static func number(_ number: NSNumber) throws(ParameterFailure) -> LogValue {
        if type(of: number) == NSNumber.booleanClass { return .bool(number.boolValue) }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            return .double(number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"):
            guard let exact = Int64(exactly: number.uint64Value) else {
                throw ParameterFailure(path: [], reason: "\(number.uint64Value) does not fit in a 64-bit signed integer")
            }
            return .integer(exact)
        default:
            return .integer(number.int64Value)
        }
    }
}
