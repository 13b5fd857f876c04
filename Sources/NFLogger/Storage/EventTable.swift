/// The storage of one kind of event. ``EventTableFactory`` hands out the right one for a kind.
protocol EventTable: AnyObject {
    var kind: EventKind { get }
    /// Inserts an event; the caller owns the transaction.
    func insert(_ event: EventRecord, sessionRowID: Int64) throws(StorageError)
    /// How many events of this kind are stored.
    func count() throws(StorageError) -> Int
}

extension SQLiteStatement {
    /// Binds the columns every event table starts its INSERT with, in this order:
    /// `uuid, session_id, name, type, parameters, <time in ms>`.
    func bindCommonColumns(of event: EventRecord, sessionRowID: Int64) throws(StorageError) {
        try bind(event.id, at: 1)
        try bind(sessionRowID, at: 2)
        try bind(event.draft.name, at: 3)
        try bind(event.draft.type, at: 4)
        try bindText(event.draft.parameters, at: 5)
        try bind(event.draft.wallMilliseconds, at: 6)
    }
}
