/// Statuses and the completions they go to, in the order they were appended, in chunks of memory
/// of its own.
///
/// Entries are moved in and out bitwise: an `Array` of ``CompletionDispatcher/Finished`` copied
/// each one through the runtime's value witnesses on the way in (growing) and out (iterating),
/// then destroyed it twice over, which cost a Disabled call more than the call itself.
/// A full chunk is kept and a new one twice its size started, rather than every entry moved to
/// bigger storage: completions that pile up while the completion queue is busy (the main queue,
/// through a loop that logs) are then never copied, where doubling one block copied each entry
/// about twice.
/// Non-copyable, so exactly one owner holds the storage: the writer filling it, then the
/// dispatcher's mailbox, then the hop that runs it.
///
/// `@unchecked Sendable` (it holds pointers) on that invariant: being non-copyable, the storage
/// is reachable from one owner at a time, and what it holds (`@Sendable` closures and statuses)
/// may cross threads; it crosses them only by being moved, under the dispatcher's lock.
struct CompletionBuffer: ~Copyable, @unchecked Sendable {
    typealias Entry = CompletionDispatcher.Finished

    /// A chunk filled before the current one: `base[0..<count]` initialized.
    private struct Chunk {
        let base: UnsafeMutablePointer<Entry>
        let count: Int
        let capacity: Int
    }

    /// Chunks filled before `base`, in order; each holds at least one entry.
    private var earlier: [Chunk] = []
    /// The chunk being filled: `base[0..<count]` initialized, the rest of `capacity` not.
    private var base: UnsafeMutablePointer<Entry>
    private var count: Int
    /// The current chunk's room: what the dispatcher keeps for the next burst is this chunk.
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
        count = 0
    }

    deinit {
        for chunk in earlier { Self.free(chunk.base, count: chunk.count) }
        Self.free(base, count: count)
    }

    var isEmpty: Bool { count == 0 && earlier.isEmpty }

    mutating func append(_ completion: consuming @escaping LogCompletion, _ status: consuming LogStatus) {
        append(Entry(completion: completion, status: status))
    }

    mutating func append(_ finished: consuming Entry) {
        if count == capacity { startChunk(capacity: capacity * 2) }
        (base + count).initialize(to: finished)
        count += 1
    }

    /// Takes every entry of `other`, after this buffer's, by taking its chunks: nothing is
    /// copied. `other` is left empty, with this buffer's chunk if it was empty, else a
    /// one-entry chunk of its own.
    mutating func append(moving other: inout CompletionBuffer) {
        guard !other.isEmpty else { return }
        let (mine, filled, room) = (base, count, capacity)
        if filled > 0 { earlier.append(Chunk(base: mine, count: filled, capacity: room)) }
        earlier.append(contentsOf: other.earlier)
        (base, count, capacity) = (other.base, other.count, other.capacity)
        other.earlier.removeAll()
        (other.base, other.count, other.capacity) = filled > 0 ? (.allocate(capacity: 1), 0, 1) : (mine, 0, room)
    }

    /// Runs every entry in order, each completion with its status, and leaves the buffer empty
    /// with its largest chunk kept for the next burst (the others are freed: a batch moved in
    /// last may be a small one). Each entry is moved out before it runs, so a completion that
    /// logs again never meets this buffer (it is owned by the hop running it, not by the mailbox).
    mutating func runAll() {
        let entries = count
        count = 0  // moved out below, one by one: nothing is left to deinitialize
        for chunk in earlier { Self.run(chunk.base, count: chunk.count) }
        Self.run(base, count: entries)
        guard !earlier.isEmpty else { return }
        for chunk in earlier {  // every entry has been moved out: only memory is left
            if chunk.capacity > capacity {
                base.deallocate()
                (base, capacity) = (chunk.base, chunk.capacity)
            } else {
                chunk.base.deallocate()
            }
        }
        earlier.removeAll(keepingCapacity: true)
    }

    /// Moves out and runs `base[0..<count]`.
    private static func run(_ base: UnsafeMutablePointer<Entry>, count: Int) {
        var next = base
        let end = base + count
        while next < end {  // a pointer walk: a Range's iterator went through generic witnesses here
            next.move().run()
            next += 1
        }
    }

    private static func free(_ base: UnsafeMutablePointer<Entry>, count: Int) {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Keeps the full current chunk in `earlier` and starts an empty one.
    private mutating func startChunk(capacity grown: Int) {
        earlier.append(Chunk(base: base, count: count, capacity: capacity))
        base = .allocate(capacity: grown)
        count = 0
        capacity = grown
    }
}
