import Foundation

/// A batch that breaks the protocol: what is wrong and where (a JSON path such as `events[3].uuid`).
@_spi(NFLogShared) public struct BatchError: Error, Sendable, Equatable, CustomStringConvertible {
    @_spi(NFLogShared) public let path: String
    @_spi(NFLogShared) public let reason: String
    /// The batch is well-formed but holds more than the collector takes at once (answered 413,
    /// so a sender splits it rather than giving up on it).
    @_spi(NFLogShared) public var isOverLimit = false

    @_spi(NFLogShared) public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

/// Turns a parsed document into a ``Batch``, checking every rule of docs/PROTOCOL.md.
/// Fields the protocol does not define are ignored, so newer SDKs can add some.
@_spi(NFLogShared) public struct BatchDecoder: Sendable {
    @_spi(NFLogShared) public var maxEvents = 10_000
    @_spi(NFLogShared) public var maxSessions = 1_000

    @_spi(NFLogShared) public init() {}

    /// Parses and validates a batch body.
    @_spi(NFLogShared) public func decode(_ body: [UInt8], limits: JSONParser.Limits = .init()) throws(BatchError) -> Batch {
        let document: JSONValue
        do { document = try JSONParser.parse(body, limits: limits) } catch {
            throw BatchError(path: error.path, reason: "malformed JSON: \(error.reason) at byte \(error.offset)")
        }
        var result: Result<Batch, BatchError> = .failure(BatchError(path: "", reason: "empty"))
        body.withUnsafeBufferPointer { raw in
            do throws(BatchError) { result = .success(try decode(document, raw: raw)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    private func decode(_ document: JSONValue, raw: UnsafeBufferPointer<UInt8>) throws(BatchError) -> Batch {
        let root = try Field(value: document, path: "").object()
        let version = try root["version"].integer()
        guard version == Int64(WireProtocol.version) else {
            throw BatchError(path: "version", reason: "unsupported version \(version); this collector reads version \(WireProtocol.version)")
        }
        let sdk = try root["sdk"].object(root: "sdk")
        let context = try root["context"].object(root: "context")
        let sessionsField = context["sessions"]
        let sessionValues = try sessionsField.array()
        guard sessionValues.count <= maxSessions else {
            throw BatchError(path: sessionsField.path, reason: "must list at most \(maxSessions) sessions, found \(sessionValues.count)")
        }
        var sessions: [Batch.Session] = []
        var sessionIDs = Set<UUID>()
        for (index, value) in sessionValues.enumerated() {
            let session = try Field(value: value, path: "context.sessions").object(root: "context.sessions", index: index)
            let id = try session["id"].uuid()
            guard sessionIDs.insert(id).inserted else {
                throw BatchError(path: session["id"].path, reason: "session \(id.uuidString.lowercased()) is listed twice")
            }
            sessions.append(Batch.Session(id: id, startedAt: try session["started_at"].timestamp(),
                                          endedAt: try session.optional("ended_at")?.timestamp()))
        }

        let eventsField = root["events"]
        let eventValues = try eventsField.array()
        let aggregateValues = try root.optional("aggregates")?.array() ?? []
        let diagnostics = try root.optional("diagnostics").map { (field) throws(BatchError) in try decodeDiagnostics(field.object(root: "diagnostics")) }
        guard eventValues.count <= maxEvents else {
            throw BatchError(path: eventsField.path, reason: "holds \(eventValues.count) events; the limit is \(maxEvents) per batch", isOverLimit: true)
        }
        // Events and aggregates share the limit: it bounds the rows one transaction writes.
        guard eventValues.count + aggregateValues.count <= maxEvents else {
            throw BatchError(path: eventsField.path, reason: "holds \(eventValues.count) events and \(aggregateValues.count) aggregates; the limit is \(maxEvents) records per batch",
                             isOverLimit: true)
        }
        guard !eventValues.isEmpty || !aggregateValues.isEmpty || diagnostics != nil else {
            throw BatchError(path: eventsField.path, reason: "must hold at least 1 event (or 0 with diagnostics)")
        }
        var events: [Batch.Event] = []
        events.reserveCapacity(eventValues.count)
        for (index, value) in eventValues.enumerated() {
            let event = try Field(value: value, path: "events").object(root: "events", index: index)
            events.append(try decodeEvent(event, sessions: sessionIDs, raw: raw))
        }
        let aggregateDecoder = AggregateDecoder(sessions: sessionIDs)
        var aggregates: [Batch.Aggregate] = []
        aggregates.reserveCapacity(aggregateValues.count)
        for (index, value) in aggregateValues.enumerated() {
            aggregates.append(try aggregateDecoder.decode(value, index: index, raw: raw))
        }
        return Batch(
            version: Int(version), id: try root["batch_id"].uuid(), sentAt: try root["sent_at"].timestamp(),
            sdkName: try sdk["name"].string(maxBytes: 64), sdkVersion: try sdk["version"].string(maxBytes: 64),
            context: Batch.Context(appID: try context["app_id"].string(maxBytes: 256),
                                   appVersion: try context["app_version"].string(maxBytes: 64),
                                   osName: try context["os_name"].string(maxBytes: 64),
                                   osVersion: try context["os_version"].string(maxBytes: 64),
                                   locale: try context["locale"].string(maxBytes: 64),
                                   sessions: sessions),
            events: events, aggregates: aggregates, diagnostics: diagnostics)
    }

    private func decodeDiagnostics(_ object: ObjectField) throws(BatchError) -> Batch.Diagnostics {
        var pruned: [(String, Int64)] = []
        if let field = object.optional("pruned") {
            let counts = try field.object(root: "diagnostics.pruned")
            guard counts.object.members.count <= 10_000 else { throw BatchError(path: field.path, reason: "must name at most 10000 events") }
            for member in counts.object.members {
                let entry = counts[member.key]
                let count = try entry.count()
                // A device's report about itself must not cost it its events: a count under a
                // name no event could have is left out, and the batch is stored.
                guard EventNameRules.problem(in: member.key, maxBytes: EventNameRules.maxNameBytes) == nil else { continue }
                pruned.append((member.key, count))
            }
        }
        var resets: [(Int64, String)] = []
        if let field = object.optional("database_resets") {
            let values = try field.array()
            guard values.count <= 100 else { throw BatchError(path: field.path, reason: "must list at most 100 resets") }
            for (index, value) in values.enumerated() {
                let reset = try Field(value: value, path: "diagnostics.database_resets").object(root: "diagnostics.database_resets", index: index)
                resets.append((try reset["at"].timestamp(), try reset["reason"].string(maxBytes: 1_024)))
            }
        }
        let quarantined = try object.optional("quarantined")?.count() ?? 0
        return Batch.Diagnostics(pruned: pruned, databaseResets: resets, quarantined: quarantined)
    }

    private func decodeEvent(_ object: ObjectField, sessions: Set<UUID>, raw: UnsafeBufferPointer<UInt8>) throws(BatchError) -> Batch.Event {
        let event = EventMembers(object)
        let sessionField = event[.session]
        let session = try sessionField.uuid()
        guard sessions.contains(session) else {
            throw BatchError(path: sessionField.path, reason: "session \(session.uuidString.lowercased()) is not listed in context.sessions")
        }
        let kindField = event[.kind]
        guard let kind = Batch.Kind(rawValue: try kindField.string(maxBytes: 16)) else {
            throw BatchError(path: kindField.path, reason: "must be \"point\" or \"span\"")
        }
        let timestamp = try event[.timestamp].timestamp()
        var end: Int64?
        var duration: Double?
        var endParameters: String?
        var abandoned = false
        switch kind {
        case .span:
            let startField = event[.start]
            guard try startField.timestamp() == timestamp else {
                throw BatchError(path: startField.path, reason: "must equal timestamp")
            }
            end = try event[.end].timestamp()
            let durationField = event[.durationMS]
            let value = try durationField.number()
            guard value >= 0 else { throw BatchError(path: durationField.path, reason: "must not be negative") }
            duration = value
            endParameters = try event.optional(.endParameters)?.rawObject(raw)
            abandoned = try event.optional(.abandoned)?.boolean() ?? false
        case .point:
            for key in EventKey.spanOnly where event.optional(key) != nil {
                throw BatchError(path: event[key].path, reason: "only spans have \(key.name)")
            }
        }
        var source = Batch.Source.native
        if let sourceField = event.optional(.source) {
            guard let value = Batch.Source(rawValue: try sourceField.string(maxBytes: 16)) else {
                throw BatchError(path: sourceField.path, reason: "must be \"native\" or \"web\"")
            }
            source = value
        }
        var origin: String?
        if let originField = event.optional(.origin) {
            guard source == .web else {
                throw BatchError(path: originField.path, reason: "only web events (source \"web\") have an origin")
            }
            origin = try originField.webOrigin()
        }
        return Batch.Event(
            id: try event[.uuid].uuid(), session: session,
            name: try event[.name].eventName(maxBytes: EventNameRules.maxNameBytes),
            kind: kind, type: try event[.type].eventName(maxBytes: EventNameRules.maxTypeBytes),
            timestamp: timestamp, end: end, durationMilliseconds: duration,
            parameters: try event.optional(.parameters)?.rawObject(raw), endParameters: endParameters, abandoned: abandoned,
            transaction: try event.optional(.transaction)?.uuid(), parentSpan: try event.optional(.parentSpan)?.spanID(),
            source: source, origin: origin)
    }
}

/// The members of an event the protocol defines (docs/PROTOCOL.md).
enum EventKey: Int, CaseIterable {
    case uuid, session, name, kind, type, timestamp, parameters, start, end, durationMS, endParameters, abandoned, source, origin,
         transaction, parentSpan

    /// What only a span may have.
    static let spanOnly: [EventKey] = [.start, .end, .durationMS, .endParameters, .abandoned]

    var name: String {
        switch self {
        case .uuid: "uuid"
        case .session: "session"
        case .name: "name"
        case .kind: "kind"
        case .type: "type"
        case .timestamp: "timestamp"
        case .parameters: "parameters"
        case .start: "start"
        case .end: "end"
        case .durationMS: "duration_ms"
        case .endParameters: "end_parameters"
        case .abandoned: "abandoned"
        case .source: "source"
        case .origin: "origin"
        case .transaction: "transaction"
        case .parentSpan: "parent_span"
        }
    }

    /// The key a member's name is, if the protocol defines it. By its length first: most names
    /// it is not differ in length, and a string compare that fails is the slow one.
    init?(_ key: String) {
        let found: EventKey? = switch key.utf8.count {
        case 3: Self.match(key, .end)
        case 4: Self.match(key, .uuid) ?? Self.match(key, .name) ?? Self.match(key, .kind) ?? Self.match(key, .type)
        case 5: Self.match(key, .start)
        case 6: Self.match(key, .source) ?? Self.match(key, .origin)
        case 7: Self.match(key, .session)
        case 9: Self.match(key, .timestamp) ?? Self.match(key, .abandoned)
        case 10: Self.match(key, .parameters)
        case 11: Self.match(key, .durationMS) ?? Self.match(key, .transaction) ?? Self.match(key, .parentSpan)
        case 14: Self.match(key, .endParameters)
        default: nil
        }
        guard let found else { return nil }
        self = found
    }

    private static func match(_ key: String, _ candidate: EventKey) -> EventKey? {
        key == candidate.name ? candidate : nil
    }
}

/// An event's members, found in one pass over its object rather than a search per field (each
/// search a walk of the members, and most of an event's fields absent ones).
private struct EventMembers {
    private let object: ObjectField
    /// Each key's place among the members plus one (0: absent), by ``EventKey/rawValue``: a
    /// fixed buffer on the stack, not an array per event.
    private var places: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32)
        = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    init(_ object: ObjectField) {
        // A key past the buffer would be written outside it: a new key needs a bigger buffer.
        assert(EventKey.allCases.count * MemoryLayout<Int32>.stride <= MemoryLayout.size(ofValue: places))
        self.object = object
        // The parser refuses duplicate keys, so each key has at most one member.
        for (place, member) in object.object.members.enumerated() {
            guard let key = EventKey(member.key) else { continue }
            withUnsafeMutableBytes(of: &places) { $0.storeBytes(of: Int32(place + 1), toByteOffset: key.rawValue * 4, as: Int32.self) }
        }
    }

    private func value(_ key: EventKey) -> JSONValue? {
        let place = withUnsafeBytes(of: places) { Int($0.load(fromByteOffset: key.rawValue * 4, as: Int32.self)) }
        return place == 0 ? nil : object.object.members[place - 1].value
    }

    subscript(key: EventKey) -> Field {
        object.field(key.name, value: value(key))
    }

    /// The member, or `nil` if it is absent (as ``ObjectField/optional(_:)``).
    func optional(_ key: EventKey) -> Field? {
        guard let value = value(key) else { return nil }
        return object.field(key.name, value: value)
    }
}

/// Where a field is: at most a root, an array index and a key (`events[3].uuid`,
/// `context.sessions[0].id`, `version`). Kept in parts and only formatted for an error, since
/// building a string per field read was a large share of the collector's time.
private struct FieldPath {
    var root: StaticString
    var index: Int?
    var key: String?

    var description: String {
        var text = root.description
        if let index { text += "[\(index)]" }
        if let key { text = JSONPathSyntax.appending(JSONPathSyntax.member(key), to: text) }
        return text
    }
}

/// A value with where it is, for errors that say where.
private struct Field {
    let value: JSONValue?
    let location: FieldPath

    init(value: JSONValue?, location: FieldPath) {
        self.value = value
        self.location = location
    }

    init(value: JSONValue?, path root: StaticString) {
        self.init(value: value, location: FieldPath(root: root))
    }

    var path: String { location.description }

    private func wrong(_ expected: String) -> BatchError {
        guard let value else { return BatchError(path: path, reason: "is required") }
        return BatchError(path: path, reason: "must be \(expected), found \(value.kindName)")
    }

    /// This object's fields will be found under `root[index]` (or under this field's own path
    /// when it has no key yet, which is how the batch's top-level objects are reached).
    func object(root: StaticString? = nil, index: Int? = nil) throws(BatchError) -> ObjectField {
        guard case .object(let object)? = value else { throw wrong("an object") }
        return ObjectField(object: object, location: FieldPath(root: root ?? location.root, index: index ?? location.index, key: root == nil ? location.key : nil))
    }

    func array() throws(BatchError) -> [JSONValue] {
        guard case .array(let array)? = value else { throw wrong("an array") }
        return array
    }

    func string(maxBytes: Int) throws(BatchError) -> String {
        guard case .string(let string)? = value else { throw wrong("a string") }
        guard !string.isEmpty, string.utf8.count <= maxBytes else {
            throw BatchError(path: path, reason: "must be 1…\(maxBytes) bytes long")
        }
        return string
    }

    func eventName(maxBytes: Int) throws(BatchError) -> String {
        guard case .string(let string)? = value else { throw wrong("a string") }
        if let problem = EventNameRules.problem(in: string, maxBytes: maxBytes) {
            throw BatchError(path: path, reason: "is not a valid name: \(problem)")
        }
        return string
    }

    func integer() throws(BatchError) -> Int64 {
        guard case .number(let number)? = value, let integer = number.integer else { throw wrong("an integer") }
        return integer
    }

    /// Unix milliseconds: a non-negative integer.
    func timestamp() throws(BatchError) -> Int64 {
        let value = try integer()
        guard value >= 0 else { throw BatchError(path: path, reason: "must be Unix milliseconds (not negative)") }
        return value
    }

    /// A count: a non-negative integer.
    func count() throws(BatchError) -> Int64 {
        let value = try integer()
        guard value >= 0 else { throw BatchError(path: path, reason: "must not be negative") }
        return value
    }

    func boolean() throws(BatchError) -> Bool {
        guard case .bool(let value)? = value else { throw wrong("a boolean") }
        return value
    }

    func number() throws(BatchError) -> Double {
        guard case .number(let number)? = value else { throw wrong("a number") }
        return number.double
    }

    func uuid() throws(BatchError) -> UUID {
        guard case .string(let string)? = value else { throw wrong("a UUID string") }
        guard let uuid = UUID(canonical: string) else {
            throw BatchError(path: path, reason: "must be a UUID such as 0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f")
        }
        return uuid
    }

    /// A W3C span id: 16 lowercase hex digits, not all zeros.
    func spanID() throws(BatchError) -> SpanID {
        guard case .string(let string)? = value else { throw wrong("a span id string") }
        guard let id = SpanID(hex: string) else {
            throw BatchError(path: path, reason: "must be 16 lowercase hex digits, not all zeros, such as 1a2b3c4d5e6f7081")
        }
        return id
    }

    /// A web page's origin as a browser serialises it: `http` or `https`, `://`, a host of
    /// lowercase ASCII letters, digits, `.`, `-` and `_` (or an IPv6 address in brackets: hex
    /// digits, `:` and `.`), and optionally `:` and a port 1…65535 without leading zeros; nothing
    /// else (no path, no trailing slash); 1…256 bytes.
    func webOrigin() throws(BatchError) -> String {
        guard case .string(let string)? = value else { throw wrong("an origin string") }
        guard WebOrigin.isValid(string) else {
            throw BatchError(path: path, reason: "must be an origin scheme://host[:port] (http or https, lowercase, at most \(WebOrigin.maxBytes) bytes), such as https://shop.example.com")
        }
        return string
    }

    /// The object's text exactly as it appears in the body.
    func rawObject(_ raw: UnsafeBufferPointer<UInt8>) throws(BatchError) -> String {
        guard case .object(let object)? = value else { throw wrong("an object") }
        return String(decoding: UnsafeBufferPointer(rebasing: raw[object.range]), as: UTF8.self)
    }
}

/// The rules of an event's `origin` (docs/PROTOCOL.md).
enum WebOrigin {
    static let maxBytes = 256

    static func isValid(_ origin: String) -> Bool {
        let bytes = Array(origin.utf8)
        guard !bytes.isEmpty, bytes.count <= maxBytes else { return false }
        let rest: ArraySlice<UInt8>
        if bytes.starts(with: "https://".utf8) {
            rest = bytes[8...]
        } else if bytes.starts(with: "http://".utf8) {
            rest = bytes[7...]
        } else {
            return false
        }
        // The host ends at the port's colon, which for an IPv6 address follows its bracket.
        var host = rest
        var port: ArraySlice<UInt8>?
        if rest.first == UInt8(ascii: "[") {
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { return false }
            host = rest[rest.startIndex...close]
            let after = rest[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return false }
                port = after.dropFirst()
            }
            let address = host.dropFirst().dropLast()
            guard !address.isEmpty, address.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                return false
            }
        } else {
            if let colon = rest.firstIndex(of: UInt8(ascii: ":")) {
                host = rest[..<colon]
                port = rest[(colon + 1)...]
            }
            guard !host.isEmpty, host.allSatisfy({
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
            }) else { return false }
        }
        if let port {
            guard (1...5).contains(port.count), port.first != UInt8(ascii: "0"),
                  port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
            let value = port.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard value <= 65_535 else { return false }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
    }
}

private struct ObjectField {
    let object: JSONObject
    let location: FieldPath

    subscript(key: String) -> Field {
        field(key, value: object[key])
    }

    /// The member, or `nil` if it is absent. `null` is not "absent": the protocol's optional
    /// fields are left out, never null, so a null is checked (and refused) like any other value.
    func optional(_ key: String) -> Field? {
        guard let value = object[key] else { return nil }
        return field(key, value: value)
    }

    /// `value` as this object's member `key`.
    func field(_ key: String, value: JSONValue?) -> Field {
        var location = self.location
        location.key = key
        return Field(value: value, location: location)
    }
}
