import Tracing

/// A span's attributes as bounded parameters: numbers and booleans as such, strings cut, arrays
/// and other values as their text.
enum SpanAttributeFlattener {
    static func flatten(_ attributes: SpanAttributes, prefix: String, into parameters: inout BoundedParameters) {
        var all: [(String, SpanAttribute)] = []
        attributes.forEach { name, attribute in all.append((name, attribute)) }
        // Past the bound, which attributes are kept should not depend on the dictionary's order.
        if all.count > BoundedParameters.maxKeys { all.sort { $0.0 < $1.0 } }
        for (name, attribute) in all {
            if parameters.isFull {
                parameters.markTruncated()
                return
            }
            let key = prefix + name
            switch attribute {
            case .int32(let value): parameters.add(key, integer: Int64(value))
            case .int64(let value): parameters.add(key, integer: value)
            case .double(let value): parameters.add(key, double: value)
            case .bool(let value): parameters.add(key, bool: value)
            case .string(let value): parameters.add(key, string: value)
            case .stringConvertible(let value): parameters.add(key, string: value.description)
            default: parameters.add(key, string: String(describing: attribute))
            }
        }
    }
}
