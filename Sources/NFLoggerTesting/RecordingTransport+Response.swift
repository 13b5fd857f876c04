import Foundation
import NFLogger

extension RecordingTransport {
    /// How the transport answers one upload. What the SDK does with each answer is the table of
    /// `docs/PROTOCOL.md` ("Responses").
    ///
    /// ```swift
    /// transport.enqueue(.status(503, retryAfter: 1), .networkError)   // then accepts
    /// ```
    public enum Response: Sendable, Hashable {
        /// `200` with the body a collector sends (`{"batch_id", "accepted", "duplicates"}`): every
        /// event is stored, and the SDK deletes them.
        case accept
        /// Any status. A 2xx is an acceptance, as ``accept`` (its events are recorded as stored);
        /// any other status comes with the collector's error body `{"error": {"message", "path"}}`.
        ///
        /// - `retryAfter`: seconds, sent as `Retry-After`; with `503` or `429` the SDK waits at
        ///   least this long before sending anything again.
        /// - `path`: the error body's `path`. With `400` and a path into the events
        ///   (`"events[0]"`) the SDK splits the batch and quarantines a single refused event;
        ///   `400` without one (the envelope is wrong), `401`, `403` and `404` pause uploads for
        ///   `Configuration.Upload.refusedBackoff`. `413` splits the batch whatever the path.
        case status(Int, retryAfter: Int? = nil, path: String? = nil)
        /// No answer at all: ``RecordingTransport/send(_:)`` throws ``NetworkError``, as when the
        /// connection drops. The SDK sends the same batch again after its backoff.
        case networkError

        /// Whether the answer is a 2xx, so the SDK deletes the batch's events.
        public var isAccepted: Bool {
            switch self {
            case .accept: true
            case .status(let status, _, _): (200..<300).contains(status)
            case .networkError: false
            }
        }
    }

    /// What ``RecordingTransport/send(_:)`` throws for ``Response/networkError``.
    public struct NetworkError: Error, Sendable, CustomStringConvertible {
        public var description: String { "the recording transport dropped the connection, as it was told to" }
    }
}
