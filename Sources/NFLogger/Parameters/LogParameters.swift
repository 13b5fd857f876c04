/// An event's parameters: string keys and JSON-compatible values, checked by the compiler.
///
/// Literals, nested literals and variables all work without wrapping; a `Date`, a `URL` or a
/// model object does not compile (convert it first: `date.timeIntervalSince1970`,
/// `url.absoluteString`, or make the type ``LogValueConvertible``):
///
/// ```swift
/// logger.logEvent(name: "ui.tap", parameters: ["screen": screenName, "index": i, "tags": ["a", "b"]])
/// ```
///
/// The members keep the order they were written in, and that is their order in the stored and
/// uploaded JSON. A key written twice keeps its last value, in its first place (a `Dictionary`
/// literal would stop the app instead). The literal is stored as written, without hashing its
/// keys: the caller's thread pays for one allocation. From a `Dictionary` built elsewhere, use
/// ``init(_:)``; from `JSONSerialization`, ``init(jsonObject:)``.
///
/// Parameters are encoded on the logger's queue, not on the caller's thread; a problem there
/// (a non-finite double, a key longer than 256 bytes, nesting deeper than 32 levels, more than
/// ``Configuration/Limits/maxParametersBytes`` once encoded) completes the call with
/// ``LogStatus/failed(_:)`` naming the key, and nothing is stored.
public struct LogParameters: Sendable, ExpressibleByDictionaryLiteral, RandomAccessCollection {
    /// A member: its key and its value.
    public typealias Element = (key: String, value: any LogValueConvertible)
    typealias Member = (String, any LogValueConvertible)

    // Invariant: no two members share a key. Members are few, so a key is found by a walk, which
    // for a handful of keys costs less than hashing them. Stored as the literal's own array:
    // converting it would copy every member, and a tuple holding an existential is copied
    // through the runtime's generic witnesses (hundreds of instructions a member), so the hot
    // reads below take its fields in place instead (``forEachMember(_:)``).
    private var members: [Member]

    /// No parameters.
    public init() { members = [] }

    /// The members of a literal, in the order written.
    public init(dictionaryLiteral elements: (String, any LogValueConvertible)...) {
        self.init(written: elements)
    }

    /// Members as written: the array becomes the storage as it is when every key is new.
    init(written: [Member]) {
        members = written
        if Self.hasDuplicateKeys(members) { members = Self.lastValues(members) }
    }

    /// Members whose keys the caller knows to be distinct (a dictionary's): stored as they are.
    init(distinct: [Member]) {
        assert(!Self.hasDuplicateKeys(distinct), "init(distinct:) was given a repeated key")
        members = distinct
    }

    /// Up to how many key comparisons a walk is cheaper than a hashed index.
    private static let walkLimit = 256

    /// Each key's position, for the edits of many members at once.
    private static func positions(_ members: [Member]) -> [String: Int] {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(members.count)
        for index in members.indices { positions[members[index].0] = index }
        return positions
    }

    /// The members of a dictionary, in its iteration order.
    public init(_ dictionary: [String: any LogValueConvertible]) {
        self.init(distinct: dictionary.map { ($0.key, $0.value) })
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { members.count }
    public subscript(position: Int) -> Element {
        let member = members[position]
        return (key: member.0, value: member.1)
    }

    /// The value for `key`; setting `nil` removes the member, setting a new key appends it.
    /// Each access walks the keys: for thousands of members built at run time, build a
    /// `Dictionary` and convert it once with ``init(_:)``.
    public subscript(key: String) -> (any LogValueConvertible)? {
        get { index(of: key).map { members[$0].1 } }
        set {
            switch (index(of: key), newValue) {
            case let (index?, value?): members[index].1 = value
            case let (index?, nil): members.remove(at: index)
            case let (nil, value?): members.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// Removes the member for `key`.
    /// - Returns: its value, or `nil` if there was none.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> (any LogValueConvertible)? {
        guard let index = index(of: key) else { return nil }
        return members.remove(at: index).1
    }

    /// Adds `other`'s members; for a key both have, `combine` gets this one's value and the
    /// other's and returns the one to keep.
    public mutating func merge(_ other: LogParameters,
                               uniquingKeysWith combine: (any LogValueConvertible, any LogValueConvertible) throws -> any LogValueConvertible) rethrows {
        // Walking this side's keys for each of the other's is cheaper than hashing while both are
        // small; past that, one hashed index keeps a large merge linear.
        if members.count * other.members.count <= Self.walkLimit {
            for (key, value) in other.members {
                if let index = index(of: key) {
                    members[index].1 = try combine(members[index].1, value)
                } else {
                    members.append((key, value))
                }
            }
            return
        }
        var positions = Self.positions(members)
        for (key, value) in other.members {
            if let index = positions[key] {
                members[index].1 = try combine(members[index].1, value)
            } else {
                positions[key] = members.count
                members.append((key, value))
            }
        }
    }

    /// These parameters with `other`'s added, as ``merge(_:uniquingKeysWith:)`` adds them.
    public func merging(_ other: LogParameters,
                        uniquingKeysWith combine: (any LogValueConvertible, any LogValueConvertible) throws -> any LogValueConvertible) rethrows -> LogParameters {
        var merged = self
        try merged.merge(other, uniquingKeysWith: combine)
        return merged
    }

    /// Reserves room for `count` members.
    public mutating func reserveCapacity(_ count: Int) { members.reserveCapacity(count) }

    /// Calls `body` with each member in order, read where it is stored (see `members`).
    func forEachMember<E: Error>(_ body: (borrowing String, borrowing any LogValueConvertible) throws(E) -> Void) throws(E) {
        _ = try Self.inPlace(members) { (keys, values, count) throws(E) in
            for index in 0..<count { try body(keys(index).pointee, values(index).pointee) }
        }
    }

    /// What the members' values estimate their JSON at (``LogValueConvertible/approximateJSONBytes``),
    /// read in place: this runs on the caller's thread.
    var approximateValueBytes: Int {
        Self.inPlace(members) { keys, values, count in
            var bytes = 0
            for index in 0..<count { bytes += values(index).pointee.approximateJSONBytes }
            return bytes
        } ?? 0
    }

    private func index(of key: String) -> Int? {
        Self.inPlace(members) { keys, _, count in
            for index in 0..<count where keys(index).pointee == key { return index }
            return nil
        } ?? nil
    }

    private static let valueOffset = MemoryLayout<Member>.offset(of: \Member.1) ?? MemoryLayout<String>.stride

    /// Gives `body` pointers to each member's key and value (by index below the count it gets)
    /// inside the array's storage; `nil`, without calling it, when there are no members. Memory
    /// bound to a tuple is bound to its elements' types at their offsets, so these are typed
    /// pointers to what is there; they do not outlive the call.
    private static func inPlace<R, E: Error>(
        _ members: [Member],
        _ body: ((Int) -> UnsafePointer<String>, (Int) -> UnsafePointer<any LogValueConvertible>, Int) throws(E) -> R
    ) throws(E) -> R? {
        let offset = valueOffset, stride = MemoryLayout<Member>.stride
        let result: Result<R, E>? = members.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return nil }
            let raw = UnsafeRawPointer(base)
            return Result { () throws(E) -> R in
                try body({ (raw + $0 * stride).assumingMemoryBound(to: String.self) },
                         { (raw + $0 * stride + offset).assumingMemoryBound(to: (any LogValueConvertible).self) },
                         buffer.count)
            }
        }
        return try result?.get()
    }

    private static func hasDuplicateKeys(_ members: [Member]) -> Bool {
        guard members.count > 1 else { return false }
        return inPlace(members) { keys, _, count in
            if count <= 16 {
                for i in 1..<count {
                    for j in 0..<i where keys(i).pointee == keys(j).pointee { return true }
                }
                return false
            }
            var seen = Set<String>(minimumCapacity: count)
            for index in 0..<count where !seen.insert(keys(index).pointee).inserted { return true }
            return false
        } ?? false
    }

    /// Each key once, with its last value, in its first place: linear, through one index.
    private static func lastValues(_ written: [Member]) -> [Member] {
        var unique: [Member] = []
        var positions: [String: Int] = [:]
        for (key, value) in written {
            if let index = positions[key] {
                unique[index].1 = value
            } else {
                positions[key] = unique.count
                unique.append((key, value))
            }
        }
        return unique
    }
}
