/// A pattern over dot-separated event names, with fluentd's semantics.
///
/// - `a.b` matches exactly `a.b`.
/// - `*` matches exactly one part: `a.*` matches `a.b` but neither `a` nor `a.b.c`. Inside a part
///   it matches any run of characters: `ui.tap_*` matches `ui.tap_ok`.
/// - `**` matches zero or more parts: `a.**` matches `a`, `a.b` and `a.b.c`; `a.**.z` matches
///   `a.z` and `a.b.c.z`.
/// - `{x,y}` matches either alternative, which may themselves contain dots and wildcards:
///   `{ui,net}.*`, `app.{launch,stop}`.
///
/// Braces are expanded first, and every `**` then means "zero or more parts", also when
/// repeated: `a.**.**` is `a.**`, and `a.{b,**}` matches `a`. (fluentd's regex translation
/// needs one more part in those two corners; NFLogger follows the rule as stated.)
///
/// Invalid patterns (an empty string, an empty part as in `a..b`, `**` inside a part,
/// unbalanced braces, characters other than letters, digits, `_`, `-`) are rejected when the
/// pattern is created, never at match time.
@_spi(NFLogShared) public struct TagPattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    @_spi(NFLogShared) public let text: String
    let alternatives: [Alternative]

    static let maxLength = 1024
    static let maxAlternatives = 256

    /// Parses a pattern.
    /// - Throws: ``PatternError`` saying what is wrong.
    @_spi(NFLogShared) public init(_ text: String) throws(PatternError) {
        func fail(_ reason: String) -> PatternError { PatternError(pattern: text, reason: reason) }
        guard !text.isEmpty else { throw fail("the pattern is empty") }
        guard text.utf8.count <= Self.maxLength else { throw fail("longer than \(Self.maxLength) bytes") }
        var parser = BraceExpander(bytes: Array(text.utf8), limit: Self.maxAlternatives)
        let expanded: [[UInt8]]
        do { expanded = try parser.expandAll() } catch { throw fail(error.reason) }
        var alternatives: [Alternative] = []
        for bytes in expanded {
            do { alternatives.append(try Alternative(bytes)) } catch { throw fail(error.reason) }
        }
        self.text = text
        self.alternatives = alternatives
    }

    /// Whether `name` matches. Names are expected to be valid event names.
    @_spi(NFLogShared) public func matches(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in alternatives.contains { $0.matches(bytes) } }
    }

    @_spi(NFLogShared) public var description: String { text }

    @_spi(NFLogShared) public static func == (lhs: TagPattern, rhs: TagPattern) -> Bool { lhs.text == rhs.text }
    @_spi(NFLogShared) public func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

/// A pattern that cannot be used, and why. (The SDK's public face of it is `TagPatternError`.)
@_spi(NFLogShared) public struct PatternError: Error, Sendable, Equatable {
    @_spi(NFLogShared) public let pattern: String
    @_spi(NFLogShared) public let reason: String

    @_spi(NFLogShared) public init(pattern: String, reason: String) {
        self.pattern = pattern
        self.reason = reason
    }
}

/// The reason a pattern was rejected, before the pattern text is attached.
struct PatternSyntaxError: Error {
    let reason: String
}

/// One brace-free alternative of a pattern, split into parts.
struct Alternative: Sendable, Hashable {
    enum Part: Sendable, Hashable {
        /// `**`: zero or more whole parts.
        case anyParts
        /// A part without wildcards, compared byte for byte.
        case exact([UInt8])
        /// A part containing `*`, which matches any run of bytes within one part.
        case glob([UInt8])
    }

    let parts: [Part]
    let hasAnyParts: Bool

    init(_ bytes: [UInt8]) throws(PatternSyntaxError) {
        var parts: [Part] = []
        for (index, part) in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).enumerated() {
            let display = String(decoding: bytes, as: UTF8.self)
            guard !part.isEmpty else {
                throw PatternSyntaxError(reason: "part \(index + 1) of \"\(display)\" is empty")
            }
            if part.elementsEqual("**".utf8) {
                if parts.last != .anyParts { parts.append(.anyParts) }  // `**.**` is just `**`
                continue
            }
            var hasStar = false
            var previous: UInt8 = 0
            for byte in part {
                guard EventNameRules.isPartByte(byte) || byte == UInt8(ascii: "*") else {
                    throw PatternSyntaxError(reason: "character \(Self.show(byte)) is not allowed (letters, digits, _, -, *, ., {, }, , only)")
                }
                if byte == UInt8(ascii: "*") {
                    if previous == byte {
                        throw PatternSyntaxError(reason: "'**' must be a whole part, as in a.**.b")
                    }
                    hasStar = true
                }
                previous = byte
            }
            parts.append(hasStar ? .glob(Array(part)) : .exact(Array(part)))
        }
        self.parts = parts
        self.hasAnyParts = parts.contains(.anyParts)
    }

    private static func show(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(String(byte, radix: 16))"
    }

    func matches(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        hasAnyParts ? matchesWithAnyParts(name) : matchesPartByPart(name)
    }

    /// The common case: no `**`, so parts pair up one to one. No allocation.
    private func matchesPartByPart(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        for (index, part) in parts.enumerated() {
            guard start <= name.count else { return false }
            var end = start
            while end < name.count && name[end] != UInt8(ascii: ".") { end += 1 }
            let segment = UnsafeBufferPointer(rebasing: name[start..<end])
            guard Self.matches(part, segment) else { return false }
            if index == parts.count - 1 { return end == name.count }
            start = end + 1
        }
        return false
    }

    /// With `**`: dynamic programming over (pattern part, name part), O(parts × name parts),
    /// so no pattern can make matching exponential.
    private func matchesWithAnyParts(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        var segments: [Range<Int>] = []
        var start = 0
        for index in 0...name.count where index == name.count || name[index] == UInt8(ascii: ".") {
            segments.append(start..<index)
            start = index + 1
        }
        // matched[j]: the pattern parts seen so far match the first j name parts.
        var matched = [Bool](repeating: false, count: segments.count + 1)
        matched[0] = true
        var next = matched
        for part in parts {
            if part == .anyParts {
                var any = false
                for j in 0...segments.count {
                    any = any || matched[j]
                    next[j] = any
                }
            } else {
                next[0] = false
                for j in 1...segments.count {  // there is always at least one segment
                    next[j] = matched[j - 1] && Self.matches(part, UnsafeBufferPointer(rebasing: name[segments[j - 1]]))
                }
            }
            swap(&matched, &next)
        }
        return matched[segments.count]
    }

    private static func matches(_ part: Part, _ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        switch part {
        case .anyParts: return true
        case .exact(let bytes): return bytes.elementsEqual(segment)
        case .glob(let pattern): return globMatches(pattern, segment)
        }
    }

    /// `*` matches any run of bytes; everything else matches itself. Linear backtracking.
    private static func globMatches(_ pattern: [UInt8], _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let star = UInt8(ascii: "*")
        var p = 0, t = 0, starAt = -1, resumeAt = 0
        while t < text.count {
            if p < pattern.count && pattern[p] == star {
                starAt = p; p += 1; resumeAt = t
            } else if p < pattern.count && pattern[p] == text[t] {
                p += 1; t += 1
            } else if starAt >= 0 {
                p = starAt + 1; resumeAt += 1; t = resumeAt
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == star { p += 1 }
        return p == pattern.count
    }
}

/// Expands `{x,y}` alternatives (nested allowed) into plain patterns: `{a,b}.c` → `a.c`, `b.c`.
struct BraceExpander {
    let bytes: [UInt8]
    let limit: Int
    private var index = 0

    init(bytes: [UInt8], limit: Int) {
        self.bytes = bytes
        self.limit = limit
    }

    mutating func expandAll() throws(PatternSyntaxError) -> [[UInt8]] {
        let result = try sequence(depth: 0)
        if index < bytes.count {
            // sequence(depth: 0) stops early only at a stray '}' or ','.
            let byte = bytes[index]
            throw PatternSyntaxError(reason: byte == UInt8(ascii: "}") ? "'}' without a matching '{'" : "',' outside braces")
        }
        return result
    }

    private mutating func sequence(depth: Int) throws(PatternSyntaxError) -> [[UInt8]] {
        var results: [[UInt8]] = [[]]
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "{") {
                index += 1
                let choices = try alternatives(depth: depth + 1)
                var combined: [[UInt8]] = []
                for prefix in results {
                    for choice in choices {
                        combined.append(prefix + choice)
                        if combined.count > limit {
                            throw PatternSyntaxError(reason: "braces expand to more than \(limit) alternatives")
                        }
                    }
                }
                results = combined
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: ",") {
                return results  // the caller decides whether this terminator is legal here
            } else {
                for i in results.indices { results[i].append(byte) }
                index += 1
            }
        }
        return results
    }

    private mutating func alternatives(depth: Int) throws(PatternSyntaxError) -> [[UInt8]] {
        guard depth <= 8 else { throw PatternSyntaxError(reason: "braces nested deeper than 8 levels") }
        var all: [[UInt8]] = []
        while true {
            all += try sequence(depth: depth)
            guard index < bytes.count else { throw PatternSyntaxError(reason: "'{' without a matching '}'") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "}") { return all }
            // byte is ',': another alternative follows.
        }
    }
}
