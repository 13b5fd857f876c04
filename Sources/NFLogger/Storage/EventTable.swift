/// The storage of one kind of event. ``EventTableFactory`` hands out the right one for a kind.
protocol EventTable: AnyObject {
    var kind: EventKind { get }
    /// Inserts an event; the caller owns the transaction.
    func insert(_ event: EventRecord, sessionRowID: Int64) throws(StorageError)
    /// How many events of this kind are stored.
    func count() throws(StorageError) -> Int
}
