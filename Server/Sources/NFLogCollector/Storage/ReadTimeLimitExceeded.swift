import Foundation

/// A read of the store (a report, a lookup, the app list, a page of an export) ran longer than
/// the store's read time limit and was stopped. The store stays usable, and ingest was never held
/// up by it.
package struct ReadTimeLimitExceeded: Error, Sendable, CustomStringConvertible {
    /// The store's read time limit.
    package let limit: Duration

    package init(limit: Duration) {
        self.limit = limit
    }

    /// "the read took longer than 30 s (the store's read time limit)"; under a second, in ms.
    package var description: String {
        let (seconds, attoseconds) = limit.components
        let milliseconds = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
        let amount = attoseconds == 0 ? "\(seconds) s"
            : milliseconds >= 1_000 ? String(format: "%g s", milliseconds / 1_000) : String(format: "%g ms", milliseconds)
        return "the read took longer than \(amount) (the store's read time limit)"
    }
}
