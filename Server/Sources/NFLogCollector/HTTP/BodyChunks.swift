import Hummingbird
import NIOCore

/// Reads a request body into memory against the ``BodyBudget``: in pieces, each charged to the
/// budget before it is filled, so an upload holds (and is charged) what it has sent, rounded up to
/// 4 KiB, whatever length it declared. A body declared at most ``pieceSize`` (the batches an SDK
/// usually sends) is one allocation of its own size; a larger one comes in pieces of at most
/// ``pieceSize``, sized by what has arrived (a client sending a byte at a time holds 4 KiB, not
/// 64), joined once when it is all in.
enum BodyChunks {
    static let pieceSize = 64 * 1024
    static let smallestPiece = 4 * 1024

    /// The body's bytes, at most `limit` (413 past it). `refused` turns a refusal of room into the
    /// error to answer with.
    static func collect(_ body: RequestBody, declared: Int?, upTo limit: Int, budget: BodyBudget, ticket: BodyBudget.Ticket,
                        patience: Duration, refused: (BodyBudget.Refusal) -> any Error) async throws -> [UInt8] {
        var pieces: [[UInt8]] = []
        var current: [UInt8] = []
        var currentSize = 0
        var total = 0
        for try await part in body {
            let count = part.readableBytes
            guard total + count <= limit else {
                throw CollectorHTTPError(.contentTooLarge, message: "the body is larger than \(limit) bytes")
            }
            var offset = 0
            while offset < count {
                if current.count == currentSize {
                    // What has arrived, rounded up, within the rest of the declared body (or of what may
                    // be sent); a small declared body in one piece.
                    let rest = min(max(declared ?? limit, total + count), limit) - total - offset
                    let arrived = (count - offset + smallestPiece - 1) / smallestPiece * smallestPiece
                    let size = max(1, rest <= pieceSize ? rest : min(pieceSize, arrived))
                    if let refusal = await budget.reserve(size, for: ticket, patience: patience) { throw refused(refusal) }
                    if currentSize > 0 { pieces.append(current) }
                    current = []
                    current.reserveCapacity(size)
                    currentSize = size
                }
                let n = min(count - offset, currentSize - current.count)
                part.withUnsafeReadableBytes { raw in
                    current.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + n)]))
                }
                offset += n
            }
            total += count
            budget.received(count, for: ticket)
        }
        guard !pieces.isEmpty else { return current }
        pieces.append(current)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        for piece in pieces { bytes.append(contentsOf: piece) }
        return bytes
    }
}
