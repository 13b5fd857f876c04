/// Why a document is not acceptable JSON, and where.
@_spi(NFLogShared) public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset in the input.
    @_spi(NFLogShared) public let offset: Int
    @_spi(NFLogShared) public let reason: String
    /// The JSON path to the value being parsed, such as `events[3].parameters`; empty at the top.
    @_spi(NFLogShared) public private(set) var path = ""

    init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    @_spi(NFLogShared) public var description: String {
        path.isEmpty ? "\(reason) at byte \(offset)" : "\(reason) at byte \(offset) (in \(path))"
    }

    /// The same error seen from the enclosing object or array; paths are built only on failure.
    func under(key: String) -> JSONParseError {
        var copy = self
        copy.path = JSONPathSyntax.prepending(JSONPathSyntax.member(key), to: path)
        return copy
    }

    func under(index: Int) -> JSONParseError {
        var copy = self
        copy.path = path.isEmpty || path.hasPrefix("[") ? "[\(index)]" + path : "[\(index)]." + path
        return copy
    }
}

/// A strict RFC 8259 parser with limits, for input from the network.
///
/// Beyond the grammar it refuses: invalid UTF-8, unpaired surrogate escapes, duplicate keys in
/// an object, nesting deeper than `maxDepth`, strings longer than `maxStringBytes`. Every
/// refusal says where. It never recurses deeper than `maxDepth`, so hostile nesting cannot
/// exhaust the stack.
@_spi(NFLogShared) public struct JSONParser {
    @_spi(NFLogShared) public struct Limits: Sendable {
        @_spi(NFLogShared) public var maxDepth = 64
        @_spi(NFLogShared) public var maxStringBytes = 64 * 1024
        /// The most values (of any kind) in one document: a few bytes of `[0,0,0,…]` must not
        /// become hundreds of megabytes of parsed tree.
        @_spi(NFLogShared) public var maxValues = 1_000_000
        @_spi(NFLogShared) public init() {}
    }

    private static let linearKeyCheck = 16
    private let input: UnsafeBufferPointer<UInt8>
    private let limits: Limits
    private var index = 0
    private var values = 0

    private init(_ input: UnsafeBufferPointer<UInt8>, limits: Limits) {
        self.input = input
        self.limits = limits
    }

    /// Parses one JSON document (surrounding whitespace allowed, nothing else).
    @_spi(NFLogShared) public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(JSONParseError) -> JSONValue {
        var result: Result<JSONValue, JSONParseError> = .failure(JSONParseError(offset: 0, reason: "no input"))
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer, limits: limits)
            do throws(JSONParseError) { result = .success(try parser.document()) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    private func fail(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? index, reason: reason)
    }

    private mutating func document() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try value(depth: 1)
        skipWhitespace()
        guard index == input.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    private mutating func skipWhitespace() {
        while index < input.count {
            switch input[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < input.count else { throw fail("unexpected end of input") }
        values += 1
        guard values <= limits.maxValues else { throw fail("more than \(limits.maxValues) values") }
        switch input[index] {
        case UInt8(ascii: "{"): return .object(try object(depth: depth))
        case UInt8(ascii: "["): return .array(try array(depth: depth))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character \(Self.show(input[index]))")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= input.count,
              word.withUTF8Buffer({ $0.elementsEqual(input[index..<index + count]) }) else {
            throw fail("invalid literal (expected \(word))")
        }
        index += count
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONObject {
        guard depth <= limits.maxDepth else { throw fail("nested deeper than \(limits.maxDepth) levels") }
        let start = index
        index += 1  // {
        var members: [JSONMember] = []
        var keys = Set<String>()  // only used past `linearKeyCheck` members
        skipWhitespace()
        if index < input.count && input[index] == UInt8(ascii: "}") {
            index += 1
            return JSONObject(members: [], range: start..<index)
        }
        members.reserveCapacity(8)  // an event's members in one allocation, not four growing ones
        while true {
            skipWhitespace()
            guard index < input.count, input[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let keyOffset = index
            let key = try string()
            // Duplicate keys: a linear scan for the usual small object, a set for big ones.
            let duplicate: Bool
            if members.count < Self.linearKeyCheck {
                duplicate = members.contains { $0.key == key }
            } else {
                if keys.isEmpty { keys = Set(members.map(\.key)) }
                duplicate = !keys.insert(key).inserted
            }
            guard !duplicate else { throw fail("duplicate key \"\(key)\"", at: keyOffset) }
            skipWhitespace()
            guard index < input.count, input[index] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
            index += 1
            skipWhitespace()
            do {
                members.append(JSONMember(key: key, value: try value(depth: depth + 1)))
            } catch {
                throw error.under(key: key)
            }
            skipWhitespace()
            guard index < input.count else { throw fail("unexpected end of input inside an object") }
            if input[index] == UInt8(ascii: ",") { index += 1; continue }
            if input[index] == UInt8(ascii: "}") { index += 1; return JSONObject(members: members, range: start..<index) }
            throw fail("expected ',' or '}' in an object")
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= limits.maxDepth else { throw fail("nested deeper than \(limits.maxDepth) levels") }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < input.count && input[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            do {
                elements.append(try value(depth: depth + 1))
            } catch {
                throw error.under(index: elements.count)
            }
            skipWhitespace()
            guard index < input.count else { throw fail("unexpected end of input inside an array") }
            if input[index] == UInt8(ascii: ",") { index += 1; continue }
            if input[index] == UInt8(ascii: "]") { index += 1; return elements }
            throw fail("expected ',' or ']' in an array")
        }
    }

    private mutating func string() throws(JSONParseError) -> String {
        let start = index
        index += 1  // "
        let contentStart = index
        // Fast path: no escapes. ASCII needs no UTF-8 validation (the generic validator is costly).
        var ascii = true
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: input[contentStart..<index])
                index += 1
                guard content.count <= limits.maxStringBytes else { throw fail("a string is longer than \(limits.maxStringBytes) bytes", at: start) }
                if ascii { return String(decoding: content, as: UTF8.self) }
                guard let text = String(validating: content, as: UTF8.self) else { throw fail("a string is not valid UTF-8", at: start) }
                return text
            }
            if byte >= 0x80 { ascii = false }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("a control character must be escaped inside a string") }
            index += 1
        }
        // Slow path: decode escapes into bytes, then validate.
        var decoded = Array(input[contentStart..<index])
        while index < input.count {
            let byte = input[index]
            if decoded.count > limits.maxStringBytes { throw fail("a string is longer than \(limits.maxStringBytes) bytes", at: start) }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: decoded, as: UTF8.self) else { throw fail("a string is not valid UTF-8", at: start) }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < input.count else { throw fail("unexpected end of input in an escape") }
                let escape = input[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): decoded.append(0x22)
                case UInt8(ascii: "\\"): decoded.append(0x5C)
                case UInt8(ascii: "/"): decoded.append(0x2F)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < input.count, input[index] == UInt8(ascii: "\\"), input[index + 1] == UInt8(ascii: "u") else {
                            throw fail("an unpaired surrogate escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("an unpaired surrogate escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("an unpaired surrogate escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("an invalid unicode escape") }
                    decoded.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw fail("an invalid escape \\\(Self.show(escape))")
                }
            default:
                if byte < 0x20 { throw fail("a control character must be escaped inside a string") }
                decoded.append(byte)
                index += 1
            }
        }
        throw fail("unexpected end of input inside a string", at: start)
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= input.count else { throw fail("unexpected end of input in a unicode escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = input[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("an invalid hex digit in a unicode escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func number() throws(JSONParseError) -> JSONNumber {
        let start = index
        func digits() -> Int {
            let from = index
            while index < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[index]) { index += 1 }
            return index - from
        }
        if input[index] == UInt8(ascii: "-") { index += 1 }
        guard index < input.count else { throw fail("a number ends too early") }
        if input[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw fail("a number needs digits")
        }
        var isInteger = true
        if index < input.count && input[index] == UInt8(ascii: ".") {
            index += 1
            isInteger = false
            guard digits() > 0 else { throw fail("a number needs digits after '.'") }
        }
        if index < input.count && (input[index] == UInt8(ascii: "e") || input[index] == UInt8(ascii: "E")) {
            index += 1
            isInteger = false
            if index < input.count && (input[index] == UInt8(ascii: "+") || input[index] == UInt8(ascii: "-")) { index += 1 }
            guard digits() > 0 else { throw fail("a number needs digits in its exponent") }
        }
        // An integer of up to 18 digits (every timestamp and count) is exact in Int64, and
        // Double(Int64) rounds as strtod would: no text, no strtod, for the usual number.
        if isInteger, let integer = Self.smallInteger(UnsafeBufferPointer(rebasing: input[start..<index])) {
            let negativeZero = integer == 0 && input[start] == UInt8(ascii: "-")  // -0 is -0.0, as strtod reads it
            return JSONNumber(integer: integer, double: negativeZero ? -0.0 : Double(integer))
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw fail("a number is out of range", at: start) }
        return JSONNumber(integer: isInteger ? Int64(text) : nil, double: double)
    }

    /// The value of an integer's text (an optional `-`, then digits, as the grammar checked)
    /// when it has at most 18 digits, which cannot overflow; `nil` otherwise.
    private static func smallInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        let negative = text.first == UInt8(ascii: "-")
        let digits = negative ? UnsafeBufferPointer(rebasing: text.dropFirst()) : text
        guard digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for digit in digits { value = value &* 10 &+ Int64(digit &- UInt8(ascii: "0")) }
        return negative ? -value : value
    }

    private static func show(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(String(byte, radix: 16))"
    }
}
