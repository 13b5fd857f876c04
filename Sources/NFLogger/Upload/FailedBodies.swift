import Foundation

/// Batches whose send failed, by row id, each slimmed to what settling it needs, with the
/// compressed body that went out: the retry sends the same bytes without reading, encoding and
/// compressing its events again. Up to ``maxBytes`` of bodies; a batch beyond that is formed
/// afresh when its turn comes.
struct FailedBodies {
    /// While batches wait out their own backoffs, many may be waiting at once (with many faults,
    /// often more than the lanes): 1 MiB holds dozens of batches of typical events, or two of
    /// the largest, incompressible ones.
    static let maxBytes = 1 << 20

    private var bodies: [Int64: (batch: OutgoingBatch, body: Data)] = [:]
    private(set) var bytes = 0

    /// Keeps a failed batch's body, unless one is kept for it already or it would pass the bound.
    mutating func keep(_ batch: OutgoingBatch, body: Data) {
        guard bodies[batch.rowID] == nil, bytes + body.count <= Self.maxBytes else { return }
        bytes += body.count
        bodies[batch.rowID] = (batch.retained, body)
    }

    /// Takes out a kept batch that `isFree` says may go now (not in flight, not waiting alone).
    mutating func take(where isFree: (Int64) -> Bool) -> (batch: OutgoingBatch, body: Data)? {
        guard let (rowID, failed) = bodies.first(where: { isFree($0.key) }) else { return nil }
        bodies[rowID] = nil
        bytes -= failed.body.count
        return failed
    }

    mutating func removeAll() {
        bodies = [:]
        bytes = 0
    }
}
