import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Writes the wire format of docs/PROTOCOL.md: one event at a time (so a batch can stop at its
/// byte bound), then the envelope around them.
enum BatchEncoder {
    /// A session as the batch's context lists it.
    struct SessionInfo {
        let id: UUID
        let started: Int64
        let ended: Int64?
    }

    /// One event's JSON object (or an aggregate's). Stored parameters are already JSON objects and
    /// are copied verbatim.
    static func event(_ event: StoredEvent, session: UUID) -> [UInt8] {
        var out = JSONWriter(capacity: 160 + (event.parameters?.count ?? 0) + (event.endParameters?.count ?? 0), maxBytes: .max)
        self.event(event, session: session, into: &out)
        return out.bytes
    }

    /// ``event(_:session:)`` written at the end of `out`: a batch's events go one after another
    /// into one writer (``EncodedEvents``), not each into an array of its own.
    static func event(_ event: StoredEvent, session: UUID, into out: inout JSONWriter) {
        if event.kind == .aggregate { return aggregate(event, session: session, into: &out) }
        // Each separator and key is one literal: a write costs more than the bytes it copies.
        out.writeLiteral(#"{"uuid":"#); out.writeUUID(event.id)
        out.writeLiteral(#","session":"#); out.writeUUID(session)
        out.writeLiteral(#","name":"#); out.writeString(event.name)
        out.writeLiteral(#","kind":"#); out.writeString(event.kind.rawValue)
        out.writeLiteral(#","type":"#); out.writeString(event.type)
        out.writeLiteral(#","timestamp":"#); out.writeInteger(event.timestamp)
        if event.kind == .span {
            out.writeLiteral(#","start":"#); out.writeInteger(event.timestamp)
            out.writeLiteral(#","end":"#); out.writeInteger(event.end ?? event.timestamp)
            // Microsecond precision is plenty for analysis and keeps the number short.
            let micros = (event.durationNanoseconds ?? 0) / 1_000
            out.writeLiteral(#","duration_ms":"#); out.writeNumber((Double(micros) / 1_000).description)
            if event.abandoned { out.writeLiteral(#","abandoned":"#); out.writeLiteral("true") }
        }
        if let origin = event.webOrigin {
            out.writeLiteral(#","source":"#); out.writeString("web")
            out.writeLiteral(#","origin":"#); out.writeString(origin)
        }
        if let transaction = event.transaction {
            out.writeLiteral(#","transaction":"#); out.writeUUID(transaction)
        }
        if let parent = event.parentSpan {
            out.writeLiteral(#","parent_span":"#); out.writeString(TransactionContext.hex(parent))
        }
        if let parameters = event.parameters {
            out.writeLiteral(#","parameters":"#); out.writeRaw(parameters)
        }
        if let endParameters = event.endParameters {
            out.writeLiteral(#","end_parameters":"#); out.writeRaw(endParameters)
        }
        out.writeLiteral("}")
    }

    /// An aggregate's JSON object: its identity and window, then its stored state's members
    /// (`count`, `dimensions`, `overflow`, `measures`) spliced in as they are.
    private static func aggregate(_ event: StoredEvent, session: UUID, into out: inout JSONWriter) {
        let state = event.parameters ?? Array("{}".utf8)
        out.writeLiteral("{")
        out.writeKey("uuid"); out.writeUUID(event.id)
        out.writeLiteral(","); out.writeKey("session"); out.writeUUID(session)
        out.writeLiteral(","); out.writeKey("name"); out.writeString(event.name)
        out.writeLiteral(","); out.writeKey("type"); out.writeString(event.type)
        out.writeLiteral(","); out.writeKey("start"); out.writeInteger(event.timestamp)
        out.writeLiteral(","); out.writeKey("end"); out.writeInteger(max(event.timestamp, event.end ?? event.timestamp))
        out.writeLiteral(","); out.writeKey("window_s"); out.writeInteger(event.windowSeconds ?? 0)
        // The state is a JSON object written by JSONEncoder: everything after its `{`.
        if state.count > 2, state.first == UInt8(ascii: "{") {
            out.writeLiteral(",")
            out.writeRaw(state.dropFirst())
        } else {
            out.writeLiteral("}")
        }
    }

    /// The bytes the envelope adds around the events (without sessions), at most, for the byte bound.
    static let envelopeAllowance = 1_024
    /// The bytes one session adds to `context.sessions`, at most.
    static let sessionEntryBytes = 110
    /// The protocol's limit on sessions per batch.
    static let maxSessions = 1_000

    /// The whole batch: envelope, context with its sessions, and the already encoded events
    /// (`encoded`: under `events`, those of events; under `aggregates`, those of aggregates).
    static func batch(id: UUID, sentAt: Int64, properties: StandardProperties, sessions: [SessionInfo],
                      encoded: EncodedEvents, isAggregate: [Bool], diagnostics: [UInt8]? = nil) -> [UInt8] {
        var out = JSONWriter(capacity: 512 + encoded.bytes.count + encoded.count, maxBytes: .max)
        out.writeLiteral("{")
        out.writeKey("version"); out.writeInteger(Int64(WireProtocol.version))
        out.writeLiteral(","); out.writeKey("batch_id"); out.writeUUID(id)
        out.writeLiteral(","); out.writeKey("sent_at"); out.writeInteger(sentAt)
        out.writeLiteral(","); out.writeKey("sdk")
        out.writeLiteral("{"); out.writeKey("name"); out.writeString(properties.sdkName)
        out.writeLiteral(","); out.writeKey("version"); out.writeString(properties.sdkVersion)
        out.writeLiteral("}")
        out.writeLiteral(","); out.writeKey("context")
        out.writeLiteral("{"); out.writeKey("app_id"); out.writeString(properties.appID)
        out.writeLiteral(","); out.writeKey("app_version"); out.writeString(properties.appVersion)
        out.writeLiteral(","); out.writeKey("os_name"); out.writeString(properties.osName)
        out.writeLiteral(","); out.writeKey("os_version"); out.writeString(properties.osVersion)
        out.writeLiteral(","); out.writeKey("locale"); out.writeString(properties.locale)
        out.writeLiteral(","); out.writeKey("sessions"); out.writeLiteral("[")
        for (index, session) in sessions.enumerated() {
            if index > 0 { out.writeLiteral(",") }
            out.writeLiteral("{"); out.writeKey("id"); out.writeUUID(session.id)
            out.writeLiteral(","); out.writeKey("started_at"); out.writeInteger(session.started)
            if let ended = session.ended { out.writeLiteral(","); out.writeKey("ended_at"); out.writeInteger(ended) }
            out.writeLiteral("}")
        }
        out.writeLiteral("]}")
        out.writeLiteral(","); out.writeKey("events"); out.writeLiteral("[")
        writeList(encoded, where: isAggregate, is: false, into: &out)
        out.writeLiteral("]")
        if isAggregate.contains(true) {
            out.writeLiteral(","); out.writeKey("aggregates"); out.writeLiteral("[")
            writeList(encoded, where: isAggregate, is: true, into: &out)
            out.writeLiteral("]")
        }
        if let diagnostics { out.writeLiteral(","); out.writeKey("diagnostics"); out.writeRaw(diagnostics) }
        out.writeLiteral("}")
        return out.bytes
    }

    /// The objects of `encoded` whose `isAggregate` is `wanted`, comma-separated.
    private static func writeList(_ encoded: EncodedEvents, where isAggregate: [Bool], is wanted: Bool, into out: inout JSONWriter) {
        var first = true
        for index in 0..<encoded.count where isAggregate[index] == wanted {
            if !first { out.writeByte(UInt8(ascii: ",")) }
            out.writeRaw(encoded[index])
            first = false
        }
    }

    /// The diagnostic record: events the device dropped, by name, database resets, and events
    /// the collector refused that the device quarantined (only when there are some).
    static func diagnostics(pruned: [(name: String, count: Int64)], resets: [(at: Int64, reason: String)],
                            quarantined: Int64 = 0) -> [UInt8] {
        var out = JSONWriter(capacity: 64 + pruned.count * 24, maxBytes: .max)
        out.writeLiteral("{"); out.writeKey("pruned"); out.writeLiteral("{")
        for (index, entry) in pruned.enumerated() {
            if index > 0 { out.writeLiteral(",") }
            out.writeString(entry.name); out.writeLiteral(":"); out.writeInteger(entry.count)
        }
        out.writeLiteral("}")
        out.writeLiteral(","); out.writeKey("database_resets"); out.writeLiteral("[")
        for (index, reset) in resets.enumerated() {
            if index > 0 { out.writeLiteral(",") }
            out.writeLiteral("{"); out.writeKey("at"); out.writeInteger(reset.at)
            out.writeLiteral(","); out.writeKey("reason"); out.writeString(reset.reason); out.writeLiteral("}")
        }
        out.writeLiteral("]")
        if quarantined > 0 { out.writeLiteral(","); out.writeKey("quarantined"); out.writeInteger(quarantined) }
        out.writeLiteral("}")
        return out.bytes
    }
}
