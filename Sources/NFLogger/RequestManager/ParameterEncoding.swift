import Dispatch
import Foundation

/// Encodes the parameters of a drained batch, just before its write.
///
/// The RequestManager's queue is the pipeline's bottleneck (SQLite and the encoding both run
/// there), while the app's threads only enqueue; so a large batch is encoded on all the cores at
/// once, and each request's parameters are let go of by the core that encoded them.
enum ParameterEncoding {
    /// Below this, one core: splitting costs more than it saves.
    static let parallelThreshold = 256

    /// Encodes every request's parameters into it and empties them.
    /// - Returns: the requests whose parameters failed, by index.
    static func encode(_ batch: inout [RequestManager.PendingRequest], with encoder: ParameterEncoder) -> [Int: NFLoggerError] {
        let lanes = batch.count >= parallelThreshold ? min(4, ProcessInfo.processInfo.activeProcessorCount) : 1
        return batch.withUnsafeMutableBufferPointer { buffer in
            let shared = Lanes(buffer: buffer)
            guard lanes > 1 else { return shared.encode(0..<buffer.count, encoder) }
            let failures = Lock<[Int: NFLoggerError]>([:])
            let chunk = (buffer.count + lanes - 1) / lanes
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                let range = min(lane * chunk, shared.buffer.count)..<min((lane + 1) * chunk, shared.buffer.count)
                let found = shared.encode(range, encoder)
                if !found.isEmpty { failures.withLock { $0.merge(found) { first, _ in first } } }
            }
            return failures.withLock { $0 }
        }
    }

    /// The batch's storage, shared by the lanes of one `concurrentPerform`.
    /// Invariant (why it may be `@unchecked Sendable`): each lane reads and writes only the
    /// elements of its own range, the ranges do not overlap, and the buffer outlives the call.
    private struct Lanes: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<RequestManager.PendingRequest>

        func encode(_ range: Range<Int>, _ encoder: ParameterEncoder) -> [Int: NFLoggerError] {
            var failures: [Int: NFLoggerError] = [:]
            var writer = encoder.makeWriter()
            for index in range where !buffer[index].parameters.isEmpty {
                do {
                    buffer[index].request.setParameters(try encoder.encode(buffer[index].parameters, using: &writer))
                } catch {
                    failures[index] = error
                }
                buffer[index].parameters = [:]
            }
            return failures
        }
    }
}
