@_spi(NFLogShared) import NFLogSupport

/// Checks event parameters and encodes them as a JSON object, on the RequestManager's queue:
/// the caller's thread only hands the typed parameters over (no casts, no JSON).
struct ParameterEncoder: Sendable {
    /// The largest encoded object accepted, in bytes.
    let maxBytes: Int
    static let maxDepth = 32
    static let maxKeyBytes = EventNameRules.maxParameterKeyBytes

    /// Returns the JSON encoding, or `nil` for no parameters.
    func encode(_ parameters: LogParameters) throws(NFLoggerError) -> [UInt8]? {
        var writer = makeWriter()
        return try encode(parameters, using: &writer)
    }

    /// A writer for ``encode(_:using:)``, reused from one event to the next.
    func makeWriter() -> JSONWriter {
        JSONWriter(capacity: 256, maxBytes: maxBytes)
    }

    /// ``encode(_:)`` through `writer`'s memory (emptied first): a run of events allocates only
    /// the arrays it returns.
    func encode(_ parameters: LogParameters, using writer: inout JSONWriter) throws(NFLoggerError) -> [UInt8]? {
        if parameters.isEmpty { return nil }
        writer.removeAll()
        do {
            try writer.writeObject(depth: 1) { (writer: inout JSONWriter) throws(ParameterFailure) in
                var first = true
                try parameters.forEachMember { (key, value) throws(ParameterFailure) in
                    try writer.writeMember(key: key, value: value.logValue, first: first, depth: 1)
                    first = false
                }
            }
            try writer.checkSize()  // the closing brace
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

extension JSONWriter {
    mutating func writeValue(_ value: LogValue, depth: Int) throws(ParameterFailure) {
        switch value {
        case .string(let string): writeString(string)
        case .integer(let integer): writeInteger(integer)
        case .double(let double):
            guard double.isFinite else {
                throw ParameterFailure(path: [], reason: "\(double) is not a finite number; JSON has no NaN or infinity")
            }
            // Swift prints the shortest text that reads back as the same Double, always valid JSON.
            writeNumber(double.description)
        case .bool(let bool): if bool { writeLiteral("true") } else { writeLiteral("false") }
        case .null: writeLiteral("null")
        case .array(let elements):
            try checkDepth(depth)
            writeByte(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { writeByte(UInt8(ascii: ",")) }
                do { try writeValue(element, depth: depth + 1) } catch { throw error.under("[\(index)]") }
                try checkSize()
            }
            writeByte(UInt8(ascii: "]"))
        case .object(let members):
            try writeMembers(members, depth: depth)
        }
    }

    /// Writes a dictionary's members as an object (nested objects: the top level's parameters go
    /// through ``writeObject(depth:_:)`` and ``writeMember(key:value:first:depth:)`` in place).
    mutating func writeMembers(_ members: [String: LogValue], depth: Int) throws(ParameterFailure) {
        try writeObject(depth: depth) { (writer: inout JSONWriter) throws(ParameterFailure) in
            var first = true
            for (key, member) in members {
                try writer.writeMember(key: key, value: member, first: first, depth: depth)
                first = false
            }
        }
    }

    /// `{`, what `body` writes, `}`, for an object at `depth`.
    mutating func writeObject(depth: Int, _ body: (inout JSONWriter) throws(ParameterFailure) -> Void) throws(ParameterFailure) {
        try checkDepth(depth)
        writeByte(UInt8(ascii: "{"))
        try body(&self)
        writeByte(UInt8(ascii: "}"))
    }

    /// One member of an object at `depth`, with the key checks every object shares.
    mutating func writeMember(key: String, value: LogValue, first: Bool, depth: Int) throws(ParameterFailure) {
        if key.isEmpty || key.utf8.count > ParameterEncoder.maxKeyBytes {
            throw ParameterFailure(path: [key], reason: "keys must be 1…\(ParameterEncoder.maxKeyBytes) bytes")
        }
        writeString(key, before: first ? nil : UInt8(ascii: ","), after: UInt8(ascii: ":"))
        do { try writeValue(value, depth: depth + 1) } catch { throw error.under(key) }
        try checkSize()
    }

    private func checkDepth(_ depth: Int) throws(ParameterFailure) {
        guard depth <= ParameterEncoder.maxDepth else {
            throw ParameterFailure(path: [], reason: "nested deeper than \(ParameterEncoder.maxDepth) levels")
        }
    }

    func checkSize() throws(ParameterFailure) {
        if count > maxBytes {
            // The real size is unknown (we stopped early); report what was written so far.
            throw ParameterFailure(path: [], reason: "", tooLarge: (count, maxBytes))
        }
    }
}
