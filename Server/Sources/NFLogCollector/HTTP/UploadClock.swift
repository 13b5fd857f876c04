/// The time the in-flight body budget judges uploads by (``BodyBudget``), and ``ThrottledLog``
/// its intervals: a monotonic offset. The collector's own is the continuous clock; a test sets
/// the time by hand.
struct UploadClock: Sendable {
    let now: @Sendable () -> Duration

    static var continuous: UploadClock {
        let clock = ContinuousClock()
        let origin = clock.now
        return UploadClock { clock.now - origin }
    }
}
