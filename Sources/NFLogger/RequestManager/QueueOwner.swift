import Dispatch

/// The serial queue that owns a piece of mutable state, and the check that a caller is on it.
///
/// The RequestManager's queue is the only path to the database and the uploads: that rule is what
/// makes their `@unchecked Sendable` state safe, so it is checked, not only commented. In debug
/// builds (every test run) a call from any other thread traps at once, naming the place, instead
/// of racing silently (GRDB's SchedulingWatchdog does the same for its connections); release
/// builds pay nothing.
struct QueueOwner: Sendable {
    let queue: DispatchQueue

    /// Traps in debug builds unless the caller runs on ``queue``.
    @inline(__always)
    func check() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }
}
