import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The storage of one kind of record. ``EventTableFactory`` hands out the right one for a kind.
///
/// A table says how its rows are read for delivery (``uploadColumns``, ``timeColumn``,
/// ``readyCondition``); each durable output's ``OutputLane`` over it does the queueing. How rows
/// get there is each table's own (events are inserted, aggregates are folded into).
protocol EventTable: AnyObject {
    var kind: RecordKind { get }
    /// The table's name in SQL.
    var tableName: String { get }
    /// The columns a delivery reads, after `id` (see `storedEvent(kind:)`), on the alias `e`.
    var uploadColumns: String { get }
    /// The column that orders and ages its rows.
    var timeColumn: String { get }
    /// What makes a row ready besides being in no batch (spans and aggregates: ended), or "".
    var readyCondition: String { get }
    /// How many records of this kind are stored.
    func count() throws(SQLiteError) -> Int
}

extension SQLiteStatement {
    /// Binds the columns every event table starts its INSERT with, in this order:
    /// `uuid, session_id, name, type, parameters, <time in ms>`.
    /// `offset` is added to every index (a multi-row INSERT's later rows).
    func bindCommonColumns(of event: EventRecord, sessionRowID: Int64, cipher: ParameterCipher?, offset: Int32 = 0) throws(SQLiteError) {
        try bind(event.id, at: offset + 1)
        try bind(sessionRowID, at: offset + 2)
        try bind(event.draft.name, at: offset + 3)
        try bind(event.draft.type, at: offset + 4)
        try bindParameters(event.draft.parameters, id: event.id, slot: .parameters, cipher: cipher, at: offset + 5)
        try bind(event.draft.wallMilliseconds, at: offset + 6)
    }

    /// Binds parameters JSON as TEXT, or, with a cipher, sealed as a BLOB: plaintext parameters
    /// never reach the file when encryption is configured.
    func bindParameters(_ json: [UInt8]?, id: UUID, slot: ParameterCipher.Slot, cipher: ParameterCipher?, at index: Int32) throws(SQLiteError) {
        guard let cipher, let json else { return try bindText(json, at: index) }
        try bindBlob(try cipher.sealForStorage(json, id: id, slot: slot), at: index)
    }

    /// Reads the columns of every table's upload queries, the same layout for every kind (NULL
    /// where a kind has no such column): `id, uuid, session_id, name, type, parameters, <time in
    /// ms>, end_ms, duration_ns, end_parameters, abandoned, transaction_id, parent_span`, an
    /// aggregate's `window_s`, and the `web_origin` of an event web content logged.
    func storedEvent(kind: RecordKind) -> StoredEvent {
        StoredEvent(kind: kind, rowID: int64(at: 0), id: uuid(at: 1), sessionRowID: int64(at: 2),
                    name: text(at: 3) ?? "", type: text(at: 4) ?? "", parameters: blob(at: 5),
                    timestamp: int64(at: 6),
                    end: isNull(at: 7) ? nil : int64(at: 7),
                    durationNanoseconds: isNull(at: 8) ? nil : int64(at: 8),
                    endParameters: blob(at: 9),
                    abandoned: int64(at: 10) != 0,
                    transaction: isNull(at: 11) ? nil : uuid(at: 11),
                    parentSpan: isNull(at: 12) ? nil : UInt64(bitPattern: int64(at: 12)),
                    windowSeconds: kind == .aggregate ? int64(at: 13) : nil,
                    webOrigin: text(at: 14))
    }

    /// Binds an event's transaction, parent span and web origin at `index`…`index + 2` (NULL when none).
    func bindTransaction(of event: EventRecord, at index: Int32) throws(SQLiteError) {
        if let transaction = event.transaction { try bind(transaction, at: index) } else { try bindNull(at: index) }
        if let parent = event.draft.link?.parentSpan { try bind(Int64(bitPattern: parent), at: index + 1) } else { try bindNull(at: index + 1) }
        if let origin = event.draft.link?.webOrigin { try bind(origin, at: index + 2) } else { try bindNull(at: index + 2) }
    }
}
