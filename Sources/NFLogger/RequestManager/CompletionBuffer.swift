/// Statuses and the completions they go to, in one allocation, in the order they were appended.
///
/// Entries are moved in and out bitwise: an `Array` of ``CompletionDispatcher/Finished`` copied
/// each one through the runtime's value witnesses on the way in (growing) and out (iterating),
/// then destroyed it twice over, which cost a Disabled call more than the call itself.
/// Non-copyable, so exactly one owner holds the storage: the writer filling it, then the
/// dispatcher's mailbox, then the hop that runs it.
///
/// `@unchecked Sendable` (it holds a pointer) on that invariant: being non-copyable, the storage
/// is reachable from one owner at a time, and what it holds (`@Sendable` closures and statuses)
/// may cross threads; it crosses them only by being moved, under the dispatcher's lock.
struct CompletionBuffer: ~Copyable, @unchecked Sendable {
    private var base: UnsafeMutablePointer<CompletionDispatcher.Finished>
    /// Initialized entries: `base[0..<count]`; the rest of `capacity` is uninitialized.
    private(set) var count: Int
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
        count = 0
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ completion: consuming @escaping LogCompletion, _ status: consuming LogStatus) {
        append(CompletionDispatcher.Finished(completion: completion, status: status))
    }

    mutating func append(_ finished: consuming CompletionDispatcher.Finished) {
        reserve(count + 1)
        (base + count).initialize(to: finished)
        count += 1
    }

    /// Moves every entry of `other` after this buffer's, leaving `other` empty (its storage kept).
    mutating func append(moving other: inout CompletionBuffer) {
        reserve(count + other.count)
        (base + count).moveInitialize(from: other.base, count: other.count)
        count += other.count
        other.count = 0
    }

    /// Runs every entry in order, each completion with its status, and leaves the buffer empty
    /// with its storage kept. Each entry is moved out before it runs, so a completion that logs
    /// again never meets this buffer (it is owned by the hop running it, not by the mailbox).
    mutating func runAll() {
        let entries = count
        count = 0  // moved out below, one by one: nothing is left to deinitialize
        var next = base
        let end = base + entries
        while next < end {  // a pointer walk: a Range's iterator went through generic witnesses here
            let finished = next.move()
            finished.completion(finished.status)
            next += 1
        }
    }

    /// Room for `needed` entries, doubling: entries move bitwise to the new storage.
    private mutating func reserve(_ needed: Int) {
        guard needed > capacity else { return }
        var grown = capacity
        while grown < needed { grown *= 2 }
        let storage = UnsafeMutablePointer<CompletionDispatcher.Finished>.allocate(capacity: grown)
        storage.moveInitialize(from: base, count: count)
        base.deallocate()
        base = storage
        capacity = grown
    }
}
