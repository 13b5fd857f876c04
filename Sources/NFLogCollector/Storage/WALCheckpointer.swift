import Dispatch
import NFLogSupport

/// Copies the write-ahead log back into the database file on a connection and a queue of its
/// own, instead of inside the writer's commits as SQLite's auto-checkpoint would.
///
/// While a long read (a report over millions of events) holds its snapshot, no checkpoint can get
/// past it, so the log grows; the first checkpoint after it copies everything committed
/// meanwhile, tens of megabytes with their fsyncs. Done by the writer, that copy held up every
/// upload queued behind the commit that triggered it (upload p99 347 ms during reports over
/// 13M events, against 11 ms without); here the writer only appends to the log.
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is touched only on `queue`; `pending` and `lastStarted` only on
    // `writerQueue` (checked in debug builds).
    private let queue = DispatchQueue(label: "nflog-collector.store.checkpoint")
    private var connection: SQLiteConnection?
    private let writerQueue: DispatchQueue
    private var pending = false
    private var lastStarted: ContinuousClock.Instant?

    /// At most one checkpoint this often: each is an fsync of the log and of the file. Every
    /// 200 ms cost 7–15% of ingest here (fsyncs and a third busy thread on two cores); every
    /// second costs about what SQLite's own checkpoints did, and the log holds a second of ingest.
    static let defaultInterval: Duration = .seconds(1)
    let interval: Duration

    /// - Parameter writerQueue: the queue the writer commits on, and calls ``committed()`` on.
    init(path: String, writerQueue: DispatchQueue, interval: Duration = defaultInterval) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        self.writerQueue = writerQueue
        self.interval = interval
    }

    /// Tells it the writer committed: a checkpoint starts unless one is running or one started
    /// less than ``interval`` ago (the next commit asks again). Called on the writer's queue.
    func committed() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(writerQueue))
        #endif
        let now = ContinuousClock.now
        guard !pending, lastStarted.map({ now - $0 >= interval }) ?? true else { return }
        pending = true
        lastStarted = now
        queue.async {
            // PASSIVE: copies what no reader still needs, never waits for readers or the writer.
            // A failure (busy, I/O) leaves the frames in the log for the next one; a commit never
            // depends on it.
            try? self.connection?.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self.writerQueue.async { self.pending = false }
        }
    }

    /// Closes its connection after any checkpoint under way.
    func close() async {
        await withCheckedContinuation { continuation in
            queue.async {
                self.connection = nil
                continuation.resume()
            }
        }
    }
}
