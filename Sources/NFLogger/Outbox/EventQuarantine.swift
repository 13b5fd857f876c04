import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// Events set aside on the device (`quarantined_events`), each with its reason: a single event the
/// collector refused for good, so it never blocks the events behind it, and an event whose stored
/// parameters no longer decrypt. Never sent again, never silently dropped, still inspectable;
/// sealed when encryption is configured.
///
/// Runs inside its caller's transaction on the RequestManager's queue, like the Outbox.
final class EventQuarantine {
    private let tables: EventTableFactory
    private let connection: SQLiteConnection
    private let insertRow: SQLiteStatement
    private let countDistinct: SQLiteStatement
    /// Seals what goes into quarantine.
    private let cipher: ParameterCipher?
    private let logger: Logger

    init(connection: SQLiteConnection, tables: EventTableFactory, cipher: ParameterCipher?, logger: Logger) throws(SQLiteError) {
        self.tables = tables
        self.connection = connection
        self.cipher = cipher
        self.logger = logger
        insertRow = try connection.prepare("""
            INSERT INTO quarantined_events (uuid, kind, name, payload, http_status, reason, quarantined_ms, output)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        countDistinct = try connection.prepare("SELECT count(DISTINCT uuid) FROM quarantined_events")
    }

    /// An output (the collector when `output` is `nil`) refused `event` (sent as `json`) for good:
    /// a copy is kept here; the caller's ``OutputLane`` takes it out of that output's queue.
    func setAside(refused event: StoredEvent, json: [UInt8], status: Int, reason: String, output: String?, now: Int64) throws(SQLiteError) {
        if let cipher {
            try insert(event, .blob(try Self.seal(json, id: event.id, cipher: cipher)), status: status, reason: reason, output: output, now: now)
        } else {
            try insert(event, .text(json), status: status, reason: reason, output: output, now: now)
        }
    }

    /// `event`'s stored parameters do not open: each column moves here as it was stored (one row
    /// per column, so nothing is lost), sealed if it was plaintext.
    func setAside(undecryptable event: StoredEvent, because error: CipherError, cipher: ParameterCipher,
                  now: Int64) throws(SQLiteError) {
        logger.warning("an event's stored parameters do not decrypt; it is quarantined on the device",
                       metadata: ["kind": "\(event.kind.rawValue)", "reason": "\(error)"])
        let columns = [("parameters", event.parameters), ("end parameters", event.endParameters)]
        for (column, stored) in columns {
            guard let stored else { continue }
            let payload = stored.first == ParameterCipher.format ? stored : try Self.seal(stored, id: event.id, cipher: cipher)
            try insert(event, .blob(payload), status: 0, reason: "on the device: \(column): \(error)", output: nil, now: now)
        }
        // No output can read it: it leaves its table and every output's queue.
        try connection.execute("DELETE FROM \(tables.table(for: event.kind).tableName) WHERE id = \(event.rowID)")
        try connection.execute("DELETE FROM deliveries WHERE kind = \(event.kind.code) AND row = \(event.rowID)")
    }

    /// How many events are in quarantine.
    func count() throws(SQLiteError) -> Int {
        Int(try countDistinct.collect { $0.int64(at: 0) }.first ?? 0)
    }

    private static func seal(_ payload: [UInt8], id: UUID, cipher: ParameterCipher) throws(SQLiteError) -> [UInt8] {
        try cipher.sealForStorage(payload, id: id, slot: .quarantined)
    }

    /// A quarantined payload: the JSON as sent, or bytes sealed (or as stored).
    private enum Payload {
        case text([UInt8])
        case blob([UInt8])
    }

    private func insert(_ event: StoredEvent, _ payload: Payload, status: Int, reason: String, output: String?, now: Int64) throws(SQLiteError) {
        try insertRow.bind(event.id, at: 1)
        try insertRow.bind(event.kind.rawValue, at: 2)
        try insertRow.bind(event.name, at: 3)
        switch payload {
        case .text(let json): try insertRow.bindText(json, at: 4)
        case .blob(let bytes): try insertRow.bindBlob(bytes, at: 4)
        }
        try insertRow.bind(Int64(status), at: 5)
        try insertRow.bind(reason, at: 6)
        try insertRow.bind(now, at: 7)
        if let output { try insertRow.bind(output, at: 8) } else { try insertRow.bindNull(at: 8) }
        try insertRow.run()
    }
}
