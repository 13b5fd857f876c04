import Foundation

/// A value behind an `NSLock`, which every OS the SDK supports has.
///
/// Invariant, which is why it may be `Sendable`: `value` is read and written only inside
/// ``withLock(_:)``, which holds the lock for the whole body. Bodies are short, never wait and
/// never take the lock again (it is not recursive).
final class LockedState<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
