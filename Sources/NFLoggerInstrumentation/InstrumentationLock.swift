#if canImport(os)
import os
#else  // platform-floor: not Apple (Synchronization on Linux has no floor)
import Synchronization
#endif

/// A value behind a mutual-exclusion lock, as NFLogger's own `Lock` (which is internal to that
/// module): an `os_unfair_lock` on Apple platforms, where `Mutex` needs iOS 18 / macOS 15, and
/// `Mutex` elsewhere.
///
/// Invariant, which is why it may be `Sendable`: the state is read and written only inside
/// ``withLock(_:)``, which holds the lock for the whole body. Bodies must be short, must not
/// call into the SDK or the app, and must not take the same lock again (it is not recursive).
struct InstrumentationLock<State: Sendable>: ~Copyable, @unchecked Sendable {
    #if canImport(os)
    // The lock needs a stable address, and the state is changed through a borrowed `self`.
    private let lock: UnsafeMutablePointer<os_unfair_lock>
    private let state: UnsafeMutablePointer<State>

    init(_ state: State) {
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

    @inline(__always)
    borrowing func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        return body(&state.pointee)
    }
    #else  // platform-floor: not Apple
    private let mutex: Mutex<State>

    init(_ state: State) {
        mutex = Mutex(state)
    }

    @inline(__always)
    borrowing func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        mutex.withLock { (state: inout State) -> Result in body(&state) }
    }
    #endif
}
