/// What the proxy does to a request it faults: the ways connections break between a phone and
/// a collector, on the real socket.
public enum FaultKind: String, CaseIterable, Sendable, Codable {
    /// 503 with `Retry-After`, not forwarded.
    case serviceUnavailable
    /// 429 with `Retry-After`, not forwarded.
    case tooManyRequests
    /// Forwarded (the collector commits), the answer read, then the client's connection closed
    /// without a byte of it: the client cannot know its batch arrived.
    case dropAfterUpstream
    /// The connection closed after the request head, before the body is read.
    case closeBeforeBody
    /// A TCP reset (`SO_LINGER` 0, then close) once part of the body has arrived.
    case resetMidRequest
    /// Forwarded; the answer's head and part of its body relayed, then the proxy's side shut down
    /// for writing (FIN) while it keeps reading: the client sees the body end early.
    case halfClose
    /// Forwarded; the answer's head and part of its body relayed, then the connection closed.
    case dropMidBody
    /// The request read in full, then nothing: no answer until the stall limit or the client gives up.
    case stall
    /// Forwarded; the answer relayed one byte at a time, `slowByteInterval` apart.
    case slowResponse
}
