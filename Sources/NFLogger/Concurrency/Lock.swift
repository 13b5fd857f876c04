#if canImport(os)
import os
#else  // platform-floor: not Apple (Synchronization on Linux has no floor)
import Synchronization
#endif

/// A value behind a mutual-exclusion lock, without `Synchronization.Mutex`'s iOS 18 / macOS 15
/// floor on Apple platforms: there it is an `os_unfair_lock` (what `Mutex` is built on, available
/// on every OS the SDK supports); elsewhere it is `Mutex` itself, which Linux has without a floor.
/// Non-copyable and stored inline, like `Mutex`: as a class the Disabled path paid for the extra
/// indirection, and a `pthread_mutex_t` cost more again (the bench's log-call phase measures it).
/// The state may be non-copyable (the completion mailbox's buffers are), as `Mutex`'s may.
///
/// Invariant, which is why it may be `Sendable`: the state is read and written only inside
/// ``withLock(_:)``, which holds the lock for the whole body. Bodies must be short and must not
/// take the same lock again (it is not recursive).
package struct Lock<State: Sendable & ~Copyable>: ~Copyable, @unchecked Sendable {
    #if canImport(os)
    // The lock needs a stable address, and the state is changed through a borrowed `self`.
    private let lock: UnsafeMutablePointer<os_unfair_lock>
    private let state: UnsafeMutablePointer<State>

    package init(_ state: consuming State) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: os_unfair_lock())
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: state)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with the lock held and the state lent to it.
    @inline(__always)
    package borrowing func withLock<Result: ~Copyable, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        return try body(&state.pointee)
    }
    #else  // platform-floor: not Apple
    private let mutex: Mutex<State>

    package init(_ state: consuming State) {
        mutex = Mutex(state)
    }

    /// Runs `body` with the lock held and the state lent to it.
    @inline(__always)
    package borrowing func withLock<Result: ~Copyable, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try mutex.withLock { (state: inout State) throws(Failure) -> Result in try body(&state) }
    }
    #endif
}
