import Logging

/// swift-log metadata as flat string parameters: a nested dictionary's members as `key.member`
/// (four levels deep, then as text), an array as its text.
enum MetadataFlattener {
    static let maxDepth = 4

    static func flatten(_ metadata: Logger.Metadata, into parameters: inout BoundedParameters) {
        // Past the bound, which keys are kept should not depend on the dictionary's order.
        let keys = metadata.count > BoundedParameters.maxKeys ? metadata.keys.sorted() : Array(metadata.keys)
        for key in keys {
            guard let value = metadata[key] else { continue }
            if parameters.isFull {
                parameters.markTruncated()
                return
            }
            flatten(value, key: key, depth: 1, into: &parameters)
        }
    }

    private static func flatten(_ value: Logger.MetadataValue, key: String, depth: Int, into parameters: inout BoundedParameters) {
        switch value {
        case .string(let string):
            parameters.add(key, string: string)
        case .stringConvertible(let convertible):
            parameters.add(key, string: convertible.description)
        case .dictionary(let members) where depth < maxDepth:
            let keys = members.count > BoundedParameters.maxKeys ? members.keys.sorted() : Array(members.keys)
            for member in keys {
                guard let nested = members[member] else { continue }
                if parameters.isFull {
                    parameters.markTruncated()
                    return
                }
                flatten(nested, key: key + "." + member, depth: depth + 1, into: &parameters)
            }
        case .dictionary, .array:
            parameters.add(key, string: value.description)
        }
    }
}
