/// The storage requests of a drained batch, read where they are stored: each element is the
/// request alone, copied out of its `PendingRequest` by address. A `lazy.map(\.request)` over the
/// batch copied each whole `PendingRequest` (its parameters and completion too) through the
/// runtime's value witnesses, then destroyed the copy.
///
/// Valid only inside the `withUnsafeBufferPointer` call that made `buffer` (see ``withRequests(_:_:)``).
struct RequestsView: RandomAccessCollection {
    let buffer: UnsafeBufferPointer<RequestManager.PendingRequest>
    var startIndex: Int { 0 }
    var endIndex: Int { buffer.count }
    subscript(position: Int) -> StorageRequest { buffer[position].request }

    /// Runs `body` with a view of `batch`'s requests.
    static func withRequests<Result>(_ batch: [RequestManager.PendingRequest], _ body: (RequestsView) -> Result) -> Result {
        batch.withUnsafeBufferPointer { body(RequestsView(buffer: $0)) }
    }
}
