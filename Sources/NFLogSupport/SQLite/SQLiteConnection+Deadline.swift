import CSQLite

extension SQLiteConnection {
    /// Runs `body` with a deadline on this connection's statements: once `deadline` has passed,
    /// the statement SQLite is running stops with `SQLITE_INTERRUPT` (an ``SQLiteError`` whose
    /// ``SQLiteError/isInterrupt`` is true), which the step that ran it throws. Statements stepped
    /// through ``SQLiteStatement/step()`` are reset by that failure, so the connection is usable
    /// again at once.
    ///
    /// SQLite checks the clock every `checkEvery` virtual-machine instructions, through its
    /// progress handler; a single instruction that takes long (sorting a large spilled result)
    /// can overrun the deadline by its own length. Time spent in Swift between steps is not
    /// interrupted, only noticed at the next step.
    ///
    /// The connection has one progress handler: calls must not be nested, and nothing else may
    /// install one meanwhile.
    ///
    /// Only the collector uses it: `ContinuousClock` is above the SDK's floor (this module is
    /// built into apps too), hence the availability.
    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @_spi(NFLogShared) public func withDeadline<T, E: Error>(_ deadline: ContinuousClock.Instant, checkEvery instructions: Int32 = 1_000,
                                          _ body: () throws(E) -> T) throws(E) -> T {
        // SQLite keeps only a raw pointer: a retained box, released once the handler is removed,
        // so the callback can never see it freed.
        let context = Unmanaged.passRetained(DeadlineBox(deadline)).toOpaque()
        sqlite3_progress_handler(handle, instructions, { context in
            guard let context else { return 0 }
            let box = Unmanaged<DeadlineBox>.fromOpaque(context).takeUnretainedValue()
            return ContinuousClock.now >= box.deadline ? 1 : 0
        }, context)
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            Unmanaged<DeadlineBox>.fromOpaque(context).release()
        }
        return try body()
    }
}

/// The deadline the progress handler reads, on the heap so SQLite can hold a pointer to it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
private final class DeadlineBox {
    let deadline: ContinuousClock.Instant
    init(_ deadline: ContinuousClock.Instant) { self.deadline = deadline }
}
