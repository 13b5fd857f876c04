import Atomics

/// The earliest moment (on the uploader's monotonic clock) a request may leave. The Uploader sets
/// it on its queue when a wait starts; the sending task reads it just before the request goes
/// out, so a batch that was being compressed when a `Retry-After` arrived is held back rather
/// than sent early.
final class SendGate: Sendable {
    // An atomic rather than the queue: the sending task runs off the queue, and must not wait on it.
    private let notBefore = ManagedAtomic<UInt64>(0)

    func close(until nanoseconds: UInt64) { notBefore.store(nanoseconds, ordering: .relaxed) }

    func open() { notBefore.store(0, ordering: .relaxed) }

    func isOpen(at nanoseconds: UInt64) -> Bool { nanoseconds >= notBefore.load(ordering: .relaxed) }
}
