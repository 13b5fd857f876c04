import Foundation

/// Decides which session an event belongs to.
///
/// A session starts with the logger and again on ``resume(monotonicNanoseconds:wallMilliseconds:)``
/// when the app stayed suspended (in the background) for at least `idleTimeout`. A shorter trip
/// to the background continues the same session.
///
/// A value type with no locking of its own: it lives inside the RequestManager's pending-queue
/// lock, so an event's session is decided in the same critical section that orders the event.
struct SessionTracker {
    private(set) var current: Session
    private(set) var suspendedAtNanoseconds: UInt64?
    let idleTimeoutNanoseconds: UInt64

    init(idleTimeoutNanoseconds: UInt64, wallMilliseconds: Int64) {
        self.idleTimeoutNanoseconds = idleTimeoutNanoseconds
        self.current = Session(id: UUID(), startedMilliseconds: wallMilliseconds)
    }

    var isSuspended: Bool { suspendedAtNanoseconds != nil }

    /// Marks the app as backgrounded. Returns `false` if it already was.
    mutating func suspend(monotonicNanoseconds: UInt64) -> Bool {
        guard suspendedAtNanoseconds == nil else { return false }
        suspendedAtNanoseconds = monotonicNanoseconds
        return true
    }

    enum Resumption: Equatable {
        /// The app was not suspended.
        case notSuspended
        /// Back within the idle timeout: the session goes on.
        case continued
        /// Back after the idle timeout: a new session began.
        case newSession
    }

    mutating func resume(monotonicNanoseconds: UInt64, wallMilliseconds: Int64) -> Resumption {
        guard let suspendedAt = suspendedAtNanoseconds else { return .notSuspended }
        suspendedAtNanoseconds = nil
        let away = monotonicNanoseconds >= suspendedAt ? monotonicNanoseconds - suspendedAt : 0
        guard away >= idleTimeoutNanoseconds else { return .continued }
        current = Session(id: UUID(), startedMilliseconds: wallMilliseconds)
        return .newSession
    }
}
