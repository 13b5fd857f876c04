import Foundation

/// Checks one element of a batch's `aggregates` against docs/PROTOCOL.md ("Aggregates",
/// "Quantile sketches and measure summaries") and turns it into a ``Batch/Aggregate``.
///
/// Every rule of a measure summary and its sketch is checked here, on the parsed document, before
/// the summary is decoded: so an error names the value at fault
/// (`aggregates[2].measures.ms.sketch.positive.counts[3]`), and the decoder of `NFLogSupport` is
/// only ever given summaries it accepts, with every total within a signed 64-bit integer.
///
/// Paths are built from the inside out and only for an error: each level prepends its step to
/// the path of the error thrown below it.
struct AggregateDecoder {
    let sessions: Set<UUID>

    static let maxDimensions = 8
    static let maxMeasures = 256
    static let maxKeyBytes = 256
    static let maxDimensionValueBytes = 256
    static let maxWindowSeconds: Int64 = 86_400

    /// `aggregates[index]`, with `raw` the body the document was parsed from.
    func decode(_ value: JSONValue, index: Int, raw: UnsafeBufferPointer<UInt8>) throws(BatchError) -> Batch.Aggregate {
        do {
            return try decode(Members(value), raw: raw)
        } catch {
            throw error.under("[\(index)]").under("aggregates")
        }
    }

    private func decode(_ object: Members, raw: UnsafeBufferPointer<UInt8>) throws(BatchError) -> Batch.Aggregate {
        let id = try object.uuid("uuid")
        let session = try object.uuid("session")
        guard sessions.contains(session) else {
            throw BatchError(path: "session", reason: "session \(session.uuidString.lowercased()) is not listed in context.sessions")
        }
        let name = try object.name("name", maxBytes: EventNameRules.maxNameBytes)
        let type = try object.name("type", maxBytes: EventNameRules.maxTypeBytes)
        let start = try object.integer("start", in: 0...Int64.max, "must be Unix milliseconds (not negative)")
        let end = try object.integer("end", in: 0...Int64.max, "must be Unix milliseconds (not negative)")
        let window = try object.integer("window_s", in: 1...Self.maxWindowSeconds, "must be from 1 to \(Self.maxWindowSeconds) seconds")
        guard start <= end else { throw BatchError(path: "end", reason: "must not be before start") }
        guard end - start <= window * 1_000 else {
            throw BatchError(path: "end", reason: "must be at most window_s (\(window) s) after start")
        }
        let count = try object.integer("count", in: 1...Int64.max, "must be at least 1")

        var overflow = false
        if let field = object.optional("overflow") {
            guard case .bool(true) = field else { throw BatchError(path: "overflow", reason: "must be true when present") }
            overflow = true
        }
        var dimensions: [(key: String, value: String)] = []
        if object.optional("dimensions") != nil {
            let members = try object.object("dimensions")
            do throws(BatchError) {
                guard members.count <= Self.maxDimensions else {
                    throw BatchError(path: "", reason: "must hold at most \(Self.maxDimensions) keys, found \(members.count)")
                }
                for member in members {
                    let step = JSONPathSyntax.member(member.key)
                    guard (1...Self.maxKeyBytes).contains(member.key.utf8.count) else {
                        throw BatchError(path: step, reason: "a dimension's name must be 1…\(Self.maxKeyBytes) bytes long")
                    }
                    guard case .string(let text) = member.value else {
                        throw BatchError(path: step, reason: "must be a string, found \(member.value.kindName)")
                    }
                    guard text.utf8.count <= Self.maxDimensionValueBytes else {
                        throw BatchError(path: step, reason: "must be at most \(Self.maxDimensionValueBytes) bytes long")
                    }
                    dimensions.append((member.key, text))
                }
            } catch {
                throw error.under("dimensions")
            }
            guard !overflow || dimensions.isEmpty else {
                throw BatchError(path: "dimensions", reason: "an overflow aggregate has no dimensions")
            }
            dimensions.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        }

        let (measures, measuresJSON) = try decodeMeasures(object, count: count, raw: raw)
        return Batch.Aggregate(id: id, session: session, name: name, type: type, start: start, end: end, windowSeconds: window,
                               count: count, dimensions: dimensions, overflow: overflow, measures: measures, measuresJSON: measuresJSON)
    }

    private func decodeMeasures(_ aggregate: Members, count: Int64, raw: UnsafeBufferPointer<UInt8>)
        throws(BatchError) -> ([String: MeasureSummary], String) {
        guard case .object(let object)? = aggregate.optional("measures") else {
            _ = try aggregate.object("measures")  // throws the right error: absent, or not an object
            return ([:], "{}")
        }
        do throws(BatchError) {
            guard object.members.count <= Self.maxMeasures else {
                throw BatchError(path: "", reason: "must hold at most \(Self.maxMeasures) parameters, found \(object.members.count)")
            }
            for member in object.members {
                let step = JSONPathSyntax.member(member.key)
                guard (1...Self.maxKeyBytes).contains(member.key.utf8.count) else {
                    throw BatchError(path: step, reason: "a measure's name must be 1…\(Self.maxKeyBytes) bytes long")
                }
                do { try Self.checkSummary(Members(member.value), maxCount: count) } catch { throw error.under(step) }
            }
        } catch {
            throw error.under("measures")
        }
        // Every rule is checked: what is left is decoding, which cannot fail on what passed them.
        let text = UnsafeBufferPointer(rebasing: raw[object.range])
        let measures: [String: MeasureSummary]
        do {
            measures = try JSONDecoder().decode([String: MeasureSummary].self, from: Data(text))
        } catch {
            throw BatchError(path: "measures", reason: "is not a valid set of measure summaries")
        }
        return (measures, String(decoding: text, as: UTF8.self))
    }

    /// A measure summary: `{count, sum, min, max, sketch}`, its count at most the aggregate's.
    static func checkSummary(_ summary: Members, maxCount: Int64) throws(BatchError) {
        let count = try summary.integer("count", in: 0...Int64.max, "must not be negative")
        guard count <= maxCount else {
            throw BatchError(path: "count", reason: "must be at most the aggregate's count (\(maxCount))")
        }
        _ = try summary.number("sum")
        if count > 0 {
            let min = try summary.number("min")
            let max = try summary.number("max")
            guard min <= max else { throw BatchError(path: "max", reason: "must not be less than min") }
        }
        let sketchCount: Int64
        do { sketchCount = try checkSketch(Members(summary.optional("sketch"))) } catch { throw error.under("sketch") }
        guard sketchCount == count else {
            throw BatchError(path: "count", reason: "must equal the sketch's count (\(sketchCount))")
        }
    }

    /// A sketch; returns its count, which fits in a signed 64-bit integer.
    static func checkSketch(_ sketch: Members) throws(BatchError) -> Int64 {
        guard case .number(let accuracy)? = sketch.optional("relative_accuracy") else {
            _ = try sketch.number("relative_accuracy")
            return 0
        }
        guard accuracy.double == QuantileSketch.relativeAccuracy else {
            throw BatchError(path: "relative_accuracy", reason: "must be \(QuantileSketch.relativeAccuracy), the only accuracy supported")
        }
        var total = try sketch.integer("zero_count", in: 0...Int64.max, "must not be negative")
        for store in ["positive", "negative"] {
            let stored: Int64
            do { stored = try checkStore(Members(sketch.optional(store))) } catch { throw error.under(store) }
            let (sum, overflow) = total.addingReportingOverflow(stored)
            guard !overflow else { throw BatchError(path: store, reason: "the sketch's counts add up to more than \(Int64.max)") }
            total = sum
        }
        return total
    }

    /// One store of a sketch: `{offset, counts}`; returns the sum of its counts.
    static func checkStore(_ store: Members) throws(BatchError) -> Int64 {
        let limit = Int64(QuantileSketch.BucketStore.maxIndex)
        let offset = try store.integer("offset", in: -limit...limit, "must be from -\(limit) to \(limit)")
        let counts = try store.array("counts")
        guard counts.count <= QuantileSketch.maxBuckets else {
            throw BatchError(path: "counts", reason: "must hold at most \(QuantileSketch.maxBuckets) counts, found \(counts.count)")
        }
        guard offset + Int64(counts.count) <= limit else {
            throw BatchError(path: "counts", reason: "reaches bucket \(offset + Int64(counts.count)); buckets end at \(limit)")
        }
        var total: Int64 = 0
        for (index, value) in counts.enumerated() {
            guard case .number(let number) = value, let count = number.integer, count >= 0 else {
                throw BatchError(path: "counts[\(index)]", reason: "must be an integer ≥ 0")
            }
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow else { throw BatchError(path: "counts[\(index)]", reason: "the counts add up to more than \(Int64.max)") }
            total = sum
        }
        return total
    }
}

extension BatchError {
    /// This error one level further out: `step` (`measures`, `[3]`, `["a.b"]`) put in front of its path.
    func under(_ step: String) -> BatchError {
        BatchError(path: JSONPathSyntax.prepending(step, to: path), reason: reason, isOverLimit: isOverLimit)
    }
}

/// An object's members by key, with errors whose paths are relative to the object (the caller
/// prepends where the object is). A value that is not an object reads as one with no members,
/// after ``init(_:)`` refused it.
struct Members {
    let object: JSONObject

    /// The object, or the error of a value that is missing or not an object (path: empty, the
    /// value itself).
    init(_ value: JSONValue?) throws(BatchError) {
        guard case .object(let object)? = value else {
            throw BatchError(path: "", reason: value.map { "must be an object, found \($0.kindName)" } ?? "is required")
        }
        self.object = object
    }

    func optional(_ key: String) -> JSONValue? { object[key] }

    private func wrong(_ key: String, _ expected: String) -> BatchError {
        guard let value = object[key] else { return BatchError(path: JSONPathSyntax.member(key), reason: "is required") }
        return BatchError(path: JSONPathSyntax.member(key), reason: "must be \(expected), found \(value.kindName)")
    }

    func object(_ key: String) throws(BatchError) -> [JSONMember] {
        guard case .object(let object)? = object[key] else { throw wrong(key, "an object") }
        return object.members
    }

    func array(_ key: String) throws(BatchError) -> [JSONValue] {
        guard case .array(let array)? = object[key] else { throw wrong(key, "an array") }
        return array
    }

    func number(_ key: String) throws(BatchError) -> Double {
        guard case .number(let number)? = object[key] else { throw wrong(key, "a number") }
        return number.double  // the parser admits finite numbers only
    }

    func integer(_ key: String, in range: ClosedRange<Int64>, _ outOfRange: @autoclosure () -> String) throws(BatchError) -> Int64 {
        guard case .number(let number)? = object[key], let integer = number.integer else { throw wrong(key, "an integer") }
        guard range.contains(integer) else { throw BatchError(path: JSONPathSyntax.member(key), reason: outOfRange()) }
        return integer
    }

    func uuid(_ key: String) throws(BatchError) -> UUID {
        guard case .string(let string)? = object[key] else { throw wrong(key, "a UUID string") }
        guard let uuid = UUID(canonical: string) else {
            throw BatchError(path: JSONPathSyntax.member(key), reason: "must be a UUID such as 0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f")
        }
        return uuid
    }

    func name(_ key: String, maxBytes: Int) throws(BatchError) -> String {
        guard case .string(let string)? = object[key] else { throw wrong(key, "a string") }
        if let problem = EventNameRules.problem(in: string, maxBytes: maxBytes) {
            throw BatchError(path: JSONPathSyntax.member(key), reason: "is not a valid name: \(problem)")
        }
        return string
    }
}
