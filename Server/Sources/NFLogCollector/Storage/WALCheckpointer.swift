import Dispatch
@_spi(NFLogShared) import NFLogSupport

/// Keeps the write-ahead log's catch-up after a read off the writer.
///
/// Normally the writer checkpoints as SQLite does, inside a commit every 1,000 pages (4 MiB):
/// small, serial, and the log restarts from its beginning, which keeps ingest fast. But while a
/// read holds its snapshot (a report over millions of events, seconds long) no checkpoint can get
/// past it, so the log grows, and the first checkpoint after it copies everything committed
/// meanwhile, tens of megabytes with their fsyncs: done by the writer, that held up every upload
/// queued behind it (upload p99 347 ms during back-to-back reports over 13M events, against
/// 11 ms without). So a read turns the writer's checkpoints off when it starts, and when it ends
/// this does the catch-up on a connection and a queue of its own, then turns them back on.
///
/// A dedicated checkpointer for every checkpoint was tried and measured: it cost a large part of
/// ingest's throughput, because under continuous writes its checkpoints never finish before the
/// next commit, so the log never restarts and grows without bound.
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is touched only on `queue`; `writer` and `readsUnderWay` only on
    // `writerQueue`, the queue that owns the writer's connection (checked in debug builds).
    private let queue = DispatchQueue(label: "nflog-collector.store.checkpoint")
    private var connection: SQLiteConnection?
    private let writerQueue: DispatchQueue
    private var writer: SQLiteConnection?
    private var readsUnderWay = 0

    /// SQLite's default: a checkpoint in the commit that takes the log past this many pages.
    static let writerCheckpointPages = 1_000

    /// - Parameters:
    ///   - writer: the writer's connection, used here only on `writerQueue`, to turn its
    ///     checkpoints off and on.
    ///   - writerQueue: the queue that owns `writer`.
    init(path: String, writer: SQLiteConnection, writerQueue: DispatchQueue) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        self.writer = writer
        self.writerQueue = writerQueue
    }

    /// For a store that only reads: no checkpoint is ever made (the connection could not).
    init(readOnlyWriter writer: SQLiteConnection, writerQueue: DispatchQueue) {
        connection = nil
        self.writer = writer
        self.writerQueue = writerQueue
    }

    /// Sets the writer's checkpoint threshold (0: none); on `writerQueue`. A pragma that fails
    /// leaves SQLite's checkpoints as they were, which costs speed, never data.
    private func setWriterCheckpoints(pages: Int) {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(writerQueue))
        #endif
        try? writer?.execute("PRAGMA wal_autocheckpoint = \(pages)")
    }

    /// A read is starting: from the writer's next commit on, it leaves checkpoints alone.
    func readWillStart() {
        writerQueue.async {
            self.readsUnderWay += 1
            if self.readsUnderWay == 1 { self.setWriterCheckpoints(pages: 0) }
        }
    }

    /// A read ended: copy what was committed meanwhile here, then give checkpoints back to the
    /// writer (its next one is small and restarts the log).
    func readDidEnd() {
        queue.async {
            // PASSIVE: copies what no reader still needs, never waits for readers or the writer.
            // A failure (busy, I/O) leaves the frames for the writer's next checkpoint.
            try? self.connection?.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self.writerQueue.async {
                self.readsUnderWay -= 1
                if self.readsUnderWay == 0 { self.setWriterCheckpoints(pages: Self.writerCheckpointPages) }
            }
        }
    }

    /// Closes its connection after any checkpoint under way, and lets go of the writer's.
    func close() async {
        await withCheckedContinuation { continuation in
            queue.async {
                self.connection = nil
                self.writerQueue.async {
                    self.writer = nil
                    continuation.resume()
                }
            }
        }
    }
}
