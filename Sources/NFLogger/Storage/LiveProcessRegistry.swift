import Foundation
@_spi(NFLogShared) import NFLogSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The processes that have the database open (`open_epochs`: each one's clock epoch and pid).
///
/// A process that is gone without closing the logger (crashed, killed) leaves its row behind, so
/// the next one to open the file knows its open spans are abandoned; a live process sharing the
/// file keeps its spans, and its file is neither moved aside nor encrypted under it.
///
/// A view of a connection, used where the connection is: on the RequestManager's queue.
struct LiveProcessRegistry {
    let connection: SQLiteConnection

    /// The epochs registered by processes that are gone: a pid that no longer answers, or this
    /// process under an older epoch. A pid that still answers is another app process sharing the
    /// file: its spans are alive.
    func departedEpochs() throws(SQLiteError) -> [Int64] {
        let me = Int64(getpid())
        let others = try connection.prepare("SELECT epoch, pid FROM open_epochs WHERE epoch != \(processClockEpoch)")
            .collect { ($0.int64(at: 0), $0.int64(at: 1)) }
        return others.filter { epoch, pid in pid == me || kill(pid_t(truncatingIfNeeded: pid), 0) != 0 }.map(\.0)
    }

    /// Forgets the `departed` epochs and records this process as having the database open.
    func register(forgetting departed: [Int64]) throws(SQLiteError) {
        if !departed.isEmpty {
            try connection.execute("DELETE FROM open_epochs WHERE epoch IN (\(departed.map(String.init).joined(separator: ",")))")
        }
        try connection.execute("""
            INSERT INTO open_epochs (epoch, pid, opened_ms) VALUES (\(processClockEpoch), \(Int64(getpid())), \(Int64(Date().timeIntervalSince1970 * 1000)))
            ON CONFLICT (epoch) DO NOTHING
            """)
    }

    /// Removes this process, as the logger closes: its open spans are not abandoned at the next
    /// start (the app may end them by id then).
    func unregister() throws(SQLiteError) {
        try connection.execute("DELETE FROM open_epochs WHERE epoch = \(processClockEpoch)")
    }

    /// Whether a live process other than this one has registered the database as open.
    func anotherProcessHasItOpen() throws(SQLiteError) -> Bool {
        let me = Int64(getpid())
        return try connection.prepare("SELECT pid FROM open_epochs").collect { $0.int64(at: 0) }
            .contains { pid in pid != me && (kill(pid_t(truncatingIfNeeded: pid), 0) == 0 || errno == EPERM) }
    }
}
