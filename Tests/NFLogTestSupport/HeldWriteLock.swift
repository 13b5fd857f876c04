import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Holds an SQLite database's write lock from a connection of the test's own, as another process
/// sharing the file (an app extension) would: the logger's drain then waits in `BEGIN IMMEDIATE`
/// while the test queues calls or changes consent.
public final class HeldWriteLock: @unchecked Sendable {
    // @unchecked: the connection is used by the owning test only, one call at a time.
    private let connection: SQLiteConnection
    private var held = true

    public init(_ url: URL) throws {
        connection = try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: 5_000)
        try connection.execute("BEGIN IMMEDIATE")
    }

    /// Lets the writer in (also on release of the value).
    public func release() {
        guard held else { return }
        held = false
        try? connection.execute("ROLLBACK")
    }

    deinit { release() }
}
