import Synchronization

/// The bytes of request bodies the collector holds in memory at once, across all connections
/// (`--max-inflight-bytes`), and per client address (`--max-uploads-per-client`,
/// `--max-inflight-bytes-per-client`).
///
/// An upload is charged for the memory it really holds (its body is read in pieces of at most
/// ``BodyChunks/pieceSize``, each charged before it is filled), not for the length it declares:
/// declaring 4 MiB and sending nothing costs a connection, not 4 MiB of the budget.
///
/// When the budget, or a client's share, is short, the slowest uploads are closed to make room
/// rather than new ones refused. An upload is *slow* when it has received nothing for
/// ``idleLimit``, or, once it has run for ``judgement``, when at the rate it kept over the last
/// ``judgement`` the rest of its body would take longer than one rate window
/// (``ConnectionLimits/bodyRateWindow``). A stalled upload is slow half a second after its last
/// byte, a trickling one after a second; one that is sending at any real speed is not, and
/// neither is one whose body is all in (it is being stored). Only when nothing is slow is the
/// newcomer refused: past a client's share with 429, past the whole budget (after a short wait
/// for room) with 503.
final class BodyBudget: Sendable {
    struct Limits: Sendable {
        var capacity: Int
        var uploadsPerClient: Int
        var bytesPerClient: Int
        var window: Duration
    }

    /// Why an upload cannot have what it asked for.
    enum Refusal: Error, Equatable {
        /// Its client has ``Limits/uploadsPerClient`` uploads in progress, none of them slow.
        case clientUploads
        /// Its client holds ``Limits/bytesPerClient``, none of it in a slow upload.
        case clientBytes
        /// The whole budget is held, none of it by a slow upload.
        case full
        /// It was itself closed to make room for another.
        case closed
    }

    struct Ticket: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    /// How long an upload runs before it can be judged slow, and the span its recent rate is
    /// measured over: long enough to see a client that has stopped, short enough that a crowd of
    /// stalled uploads gives way to honest ones within a second or two.
    static let judgement: Duration = .seconds(1)
    /// How long an upload may receive nothing before it is slow, however young: a client that
    /// sends a burst and stops would otherwise hold its bytes unjudged for a whole ``judgement``.
    static let idleLimit: Duration = .milliseconds(500)

    let limits: Limits
    private let clock: UploadClock
    private let state = Mutex(State())
    /// Told the client of each upload closed for room, for the log.
    private let onClose: @Sendable (ClientAddress?) -> Void

    private struct Upload {
        let client: ClientAddress?
        /// The body's declared length, or the most allowed.
        let expected: Int
        let started: Duration
        var held = 0
        var received = 0
        var recent: RecentBytes
        var lastProgress: Duration
        var finished = false
        let close: @Sendable () -> Void
    }

    private struct Share {
        var uploads = 0
        var bytes = 0
    }

    private struct State {
        var used = 0
        var nextID: UInt64 = 0
        var uploads: [UInt64: Upload] = [:]
        var clients: [ClientAddress: Share] = [:]
        var closedForRoom = 0
    }

    init(limits: Limits, clock: UploadClock = .continuous, onClose: @escaping @Sendable (ClientAddress?) -> Void = { _ in }) {
        self.limits = limits
        self.clock = clock
        self.onClose = onClose
    }

    var capacity: Int { limits.capacity }

    var inUse: Int { state.withLock { $0.used } }

    /// Uploads closed so far to make room for others.
    var closedForRoom: Int { state.withLock { $0.closedForRoom } }

    /// Counts an upload from `client` (nil: a request the per-client limits do not apply to, a
    /// lookup) before any of its body is read. `close` closes its connection, should it be chosen
    /// to make room.
    func open(client: ClientAddress?, expected: Int, close: @escaping @Sendable () -> Void) -> Result<Ticket, Refusal> {
        let now = clock.now()
        let (result, victims) = state.withLock { state -> (Result<Ticket, Refusal>, [@Sendable () -> Void]) in
            var victims: [@Sendable () -> Void] = []
            if let client, state.clients[client, default: Share()].uploads >= limits.uploadsPerClient {
                guard let victim = slowest(in: state, now: now, excluding: nil, client: client, freeing: false) else {
                    return (.failure(.clientUploads), [])
                }
                victims.append(evict(victim, from: &state))
            }
            let id = state.nextID
            state.nextID += 1
            state.uploads[id] = Upload(client: client, expected: expected, started: now,
                                       recent: RecentBytes(span: Self.judgement, now: now), lastProgress: now, close: close)
            if let client { state.clients[client, default: Share()].uploads += 1 }
            return (.success(Ticket(id: id)), victims)
        }
        victims.forEach { $0() }
        return result
    }

    /// Charges `bytes` more to the upload, closing slow uploads if that makes room; nil when
    /// charged.
    func take(_ bytes: Int, for ticket: Ticket) -> Refusal? {
        let now = clock.now()
        let (refusal, victims) = state.withLock { state -> (Refusal?, [@Sendable () -> Void]) in
            guard let upload = state.uploads[ticket.id] else { return (.closed, []) }
            var victims: [@Sendable () -> Void] = []
            if let client = upload.client {
                while true {
                    let held = state.clients[client, default: Share()].bytes
                    guard held > 0 && held + bytes > limits.bytesPerClient else { break }
                    guard let victim = slowest(in: state, now: now, excluding: ticket.id, client: client) else {
                        return (.clientBytes, victims)
                    }
                    victims.append(evict(victim, from: &state))
                }
            }
            // One body larger than the whole budget still goes through alone.
            while state.used > 0 && state.used + bytes > limits.capacity {
                guard let victim = slowest(in: state, now: now, excluding: ticket.id, client: nil) else {
                    return (.full, victims)
                }
                victims.append(evict(victim, from: &state))
            }
            state.used += bytes
            state.uploads[ticket.id]?.held += bytes
            if let client = upload.client { state.clients[client, default: Share()].bytes += bytes }
            return (nil, victims)
        }
        victims.forEach { $0() }
        return refusal
    }

    /// ``take(_:for:)``, waiting up to `patience` for room when the whole budget is held (room
    /// comes back as uploads are answered, milliseconds each, or as the ones holding it turn slow).
    func reserve(_ bytes: Int, for ticket: Ticket, patience: Duration) async -> Refusal? {
        let deadline = ContinuousClock.now + patience
        while true {
            let refusal = take(bytes, for: ticket)
            guard refusal == .full, ContinuousClock.now < deadline else { return refusal }
            // Polling keeps no waiter list that a cancelled request could leave behind.
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Notes `bytes` of the upload's body arriving: what its rate is judged by.
    func received(_ bytes: Int, for ticket: Ticket) {
        let now = clock.now()
        state.withLock { state in
            guard var upload = state.uploads[ticket.id] else { return }
            upload.received += bytes
            upload.recent.add(bytes, now: now)
            upload.lastProgress = now
            state.uploads[ticket.id] = upload
        }
    }

    /// The upload's body is all in: it is being decoded and stored, and is never closed for room.
    func finish(_ ticket: Ticket) {
        state.withLock { $0.uploads[ticket.id]?.finished = true }
    }

    /// Gives back what the upload holds (when it is answered, or has failed).
    func close(_ ticket: Ticket) {
        state.withLock { state in
            guard let upload = state.uploads.removeValue(forKey: ticket.id) else { return }
            release(upload, from: &state)
        }
    }

    private func release(_ upload: Upload, from state: inout State) {
        state.used -= upload.held
        guard let client = upload.client, var share = state.clients[client] else { return }
        share.uploads -= 1
        share.bytes -= upload.held
        state.clients[client] = share.uploads > 0 ? share : nil
    }

    /// Takes the upload out of the books at once (its memory goes a moment later, when its
    /// request sees its connection closed) and returns how to close it.
    private func evict(_ id: UInt64, from state: inout State) -> @Sendable () -> Void {
        guard let upload = state.uploads.removeValue(forKey: id) else { return {} }
        release(upload, from: &state)
        state.closedForRoom += 1
        let (close, report, client) = (upload.close, onClose, upload.client)
        return {
            close()
            report(client)
        }
    }

    private func isSlow(_ upload: Upload, now: Duration) -> Bool {
        let remaining = max(0, upload.expected - upload.received)
        guard !upload.finished, remaining > 0 else { return false }
        if now - upload.lastProgress >= Self.idleLimit { return true }
        guard now - upload.started >= Self.judgement else { return false }
        let perSecond = upload.recent.count(now: now) / (Self.judgement / .seconds(1))
        return perSecond * (limits.window / .seconds(1)) < Double(remaining)
    }

    /// The slowest slow upload (of `client`, when given), other than `excluding`: the least
    /// received recently, then the longest without a byte, then the most held. `freeing`: only
    /// one that holds bytes (closing the others makes no room).
    private func slowest(in state: State, now: Duration, excluding: UInt64?, client: ClientAddress?, freeing: Bool = true) -> UInt64? {
        var best: (id: UInt64, recent: Double, last: Duration, held: Int)?
        for (id, upload) in state.uploads where id != excluding && (client == nil || upload.client == client) {
            guard upload.held > 0 || !freeing, isSlow(upload, now: now) else { continue }
            let recent = upload.recent.count(now: now)
            if let current = best {
                let better = recent < current.recent
                    || (recent == current.recent && (upload.lastProgress < current.last
                        || (upload.lastProgress == current.last && upload.held > current.held)))
                guard better else { continue }
            }
            best = (id, recent, upload.lastProgress, upload.held)
        }
        return best?.id
    }
}
