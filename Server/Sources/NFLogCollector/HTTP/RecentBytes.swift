/// The bytes an upload received over the last `span`, estimated from two buckets of `span` each
/// (the current one and the one before, weighted by how much of it is still inside the span), as
/// sliding-window rate limiters do: a few integers per upload, whatever its rate. Pure arithmetic
/// on times the caller gives.
struct RecentBytes: Sendable {
    let span: Duration
    private var bucketStart: Duration
    private var current = 0
    private var previous = 0

    init(span: Duration, now: Duration) {
        self.span = span
        self.bucketStart = now
    }

    mutating func add(_ bytes: Int, now: Duration) {
        roll(to: now)
        current += bytes
    }

    /// The estimate at `now`.
    func count(now: Duration) -> Double {
        var copy = self
        copy.roll(to: now)
        let into = max(0, min(1, (now - copy.bucketStart) / span))
        return Double(copy.previous) * (1 - into) + Double(copy.current)
    }

    private mutating func roll(to now: Duration) {
        guard now - bucketStart >= span else { return }
        if now - bucketStart >= span * 2 {
            previous = 0
            bucketStart = now
        } else {
            previous = current
            bucketStart += span
        }
        current = 0
    }
}
