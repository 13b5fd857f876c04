public import Foundation
public import NFLogger
@_spi(NFLogShared) import NFLogSupport

/// An `HTTPTransport` that stands in for the collector in an app's unit tests: it keeps every
/// upload the SDK makes, decoded into typed ``RecordedBatch``es and ``RecordedEvent``s, answers
/// each as you tell it to, and serves the policy you give it. Nothing goes over the network.
///
/// ```swift
/// let transport = RecordingTransport()
/// let logger = try NFLogger(configuration: transport.configuration())
/// await logger.logEvent(name: "flow.checkout", parameters: ["items": 3])
/// await logger.flush()
/// #expect(transport.events(named: "flow.checkout").first?.parameters["items"] == 3)
/// await logger.close()
/// ```
///
/// **Uploads** (`POST`) are gunzipped (any `Configuration.Upload.gzipLevel`; `identity` is
/// read too) and decoded as the wire format of `docs/PROTOCOL.md`. Each is answered with the next
/// ``Response`` of the queue (``enqueue(_:)``), or when the queue is empty by the responder
/// (``setResponder(_:)``), or else with ``Response/accept``. A body that is not a batch, or one
/// the collector would refuse (each is also read with the collector's own decoder: names, sizes,
/// limits), is answered as a collector would (`400` with the field's path, `413` past a limit,
/// `415` for an unknown encoding) and listed in ``unreadableUploads``, not in ``batches``.
///
/// **Policy fetches** (`GET`) get `404` (the collector serves no policy: the SDK keeps its
/// configured one) until ``servePolicy(_:signature:)`` gives a policy; then `200` with an `ETag`,
/// and `304` when the SDK already holds it.
///
/// It is safe to use from any thread or task, and to share between tests only if they expect
/// each other's uploads: give each test its own.
public final class RecordingTransport: HTTPTransport, Sendable {
    /// Everything the transport has recorded and been told. Read and written only through
    /// `state.withLock`; no closure passed to it calls code of the app's (a responder) or waits.
    let state: LockedState<State>

    struct State {
        var batches: [RecordedBatch] = []
        /// The events of accepted batches, each id once, in the order they arrived.
        var events: [RecordedEvent] = []
        /// The ids in `events`.
        var eventIDs: Set<UUID> = []
        /// The aggregates of accepted batches, each id once, in the order they arrived.
        var aggregates: [RecordedAggregate] = []
        var aggregateIDs: Set<UUID> = []
        var unreadableUploads: [String] = []
        var responses: [Response] = []
        var responder: (@Sendable ([RecordedEvent]) -> Response)?
        var policy: (body: Data, signature: String?, etag: String)?
        var policyVersion = 0
        var policyRequests = 0
        var waiters: [Waiter] = []
        var nextWaiterID = 0
    }

    /// The largest body it inflates: far above what the SDK sends (at most
    /// `Configuration.Upload.batchMaxBytes` of JSON, 8 MiB).
    static let maxInflatedBytes = 64 << 20

    /// A transport that answers each upload with the next of `responses`, then accepts.
    public init(responses: [Response] = []) {
        state = LockedState(State(responses: responses))
    }

    // MARK: What it was told

    /// Queues answers for the next uploads, one each, in order, before the responder's.
    public func enqueue(_ responses: Response...) {
        state.withLock { $0.responses.append(contentsOf: responses) }
    }

    /// Decides the answer to every upload the queue does not answer, from its events (for
    /// instance, refuse a batch that holds a given event). `nil`, the default, accepts them all.
    /// It is called on the SDK's upload task, outside the transport's lock: it may read the
    /// transport, and must not block.
    public func setResponder(_ responder: (@Sendable (_ events: [RecordedEvent]) -> Response)?) {
        state.withLock { $0.responder = responder }
    }

    /// Serves `body` (a policy document, see `Policies/README.md`) to the SDK's policy fetches
    /// from now on, with `signature` (base64 Ed25519 over `body`) as `X-NFLog-Signature` when
    /// the configuration has a `Configuration.policyPublicKey`; `nil` serves none (`404`).
    /// The SDK fetches at start and every `Configuration.policyRefreshInterval`; call
    /// `NFLogger.refreshPolicy()` to fetch now.
    public func servePolicy(_ body: Data?, signature: String? = nil) {
        state.withLock { state in
            state.policyVersion += 1
            state.policy = body.map { ($0, signature, "\"policy-\(state.policyVersion)\"") }
        }
    }

    // MARK: What it recorded

    /// Every upload attempt, in the order they arrived, with the answer each got: a batch sent
    /// again after a refusal appears once per attempt.
    public var batches: [RecordedBatch] { state.withLock { $0.batches } }

    /// The events of every accepted batch, in the order they arrived, each id once: what a
    /// collector stores. The SDK sends an event again only when its batch got no 2xx (or, rarely,
    /// when it could not delete a delivered batch); ``batches`` shows every copy.
    public var events: [RecordedEvent] { state.withLock { $0.events } }

    /// The aggregates of every accepted batch, in the order they arrived, each id once.
    public var aggregates: [RecordedAggregate] { state.withLock { $0.aggregates } }

    /// The events of ``events`` with this name.
    public func events(named name: String) -> [RecordedEvent] {
        state.withLock { $0.events.filter { $0.name == name } }
    }

    /// Uploads that could not be read as a batch, each with the reason: empty unless the body is
    /// not gzip, not JSON, or breaks the wire format.
    public var unreadableUploads: [String] { state.withLock { $0.unreadableUploads } }

    /// How many policy fetches the SDK made.
    public var policyRequests: Int { state.withLock { $0.policyRequests } }

    // MARK: HTTPTransport

    /// Answers one request of the SDK's: an upload (`POST`) or a policy fetch (`GET`).
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        switch request.method.uppercased() {
        case "POST": return try upload(request)
        case "GET": return policy(request)
        default: return Self.error(405, "the recording transport answers POST (uploads) and GET (the policy)")
        }
    }

    /// The body inflated by the zlib the SDK and the collector share, under the same limit.
    private static func gunzip(_ body: Data) throws(WireFormatError) -> [UInt8] {
        do throws(GzipError) { return try Gzip.decompress(Array(body), maxOutputBytes: maxInflatedBytes) } catch {
            throw WireFormatError(path: nil, error.description)
        }
    }

    private func upload(_ request: TransportRequest) throws -> TransportResponse {
        let encoding = request.header("Content-Encoding")?.lowercased()
        guard [nil, "identity", "gzip", "x-gzip"].contains(encoding) else {
            let message = "Content-Encoding \"\(encoding ?? "")\" is neither gzip nor identity"
            state.withLock { $0.unreadableUploads.append(message) }
            return Self.error(415, message)
        }
        let batch: RecordedBatch
        let json: [UInt8]
        do throws(WireFormatError) {
            json = encoding?.hasSuffix("gzip") == true ? try Self.gunzip(request.body) : Array(request.body)
            batch = try RecordedBatch(wire: WireObject(json: json), appKey: request.header("X-NFLog-Key"))
        } catch {
            state.withLock { $0.unreadableUploads.append(error.description) }
            return Self.error(400, error.reason, path: error.path)
        }
        // Read as the collector reads it too (the wire contract's decoder, NFLogSupport's): what a
        // collector would refuse is refused here, with its status, reason and path.
        do throws(BatchError) { _ = try BatchDecoder().decode(json) } catch {
            state.withLock { $0.unreadableUploads.append(error.description) }
            return Self.error(error.isOverLimit ? 413 : 400, error.reason, path: error.path.isEmpty ? nil : error.path)
        }
        let (queued, responder) = state.withLock { state in
            (state.responses.isEmpty ? nil : state.responses.removeFirst(), state.responder)
        }
        var answered = batch
        answered.response = queued ?? responder?(batch.events) ?? .accept
        let (duplicates, satisfied) = state.withLock { state in
            state.batches.append(answered)
            var duplicates = 0
            if answered.isAccepted {
                for event in answered.events {
                    if state.eventIDs.insert(event.id).inserted { state.events.append(event) } else { duplicates += 1 }
                }
                for aggregate in answered.aggregates {
                    if state.aggregateIDs.insert(aggregate.id).inserted { state.aggregates.append(aggregate) } else { duplicates += 1 }
                }
            }
            return (duplicates, state.takeSatisfiedWaiters())
        }
        for waiter in satisfied { waiter.continuation.resume() }
        switch answered.response {
        case .networkError:
            throw NetworkError()
        case .accept:
            return Self.accepted(200, batch: answered, duplicates: duplicates)
        case .status(let status, _, _) where answered.isAccepted:
            return Self.accepted(status, batch: answered, duplicates: duplicates)
        case .status(let status, let retryAfter, let path):
            return Self.error(status, "the recording transport answered \(status), as it was told to", path: path,
                              retryAfter: retryAfter)
        }
    }

    private func policy(_ request: TransportRequest) -> TransportResponse {
        let policy = state.withLock { state in
            state.policyRequests += 1
            return state.policy
        }
        guard let policy else { return Self.error(404, "the recording transport serves no policy") }
        var headers = ["ETag": policy.etag, "Content-Type": "application/json"]
        let held = request.header("If-None-Match")?.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "")
        } ?? []
        if held.contains("*") || held.contains(policy.etag) { return TransportResponse(status: 304, headers: headers) }
        if let signature = policy.signature { headers["X-NFLog-Signature"] = signature }
        return TransportResponse(status: 200, headers: headers, body: policy.body)
    }

    // MARK: Bodies, as the collector writes them

    private struct AcceptedBody: Encodable {
        let batchID: String
        let accepted: Int
        let duplicates: Int

        enum CodingKeys: String, CodingKey {
            case batchID = "batch_id", accepted, duplicates
        }
    }

    private struct ErrorBody: Encodable {
        struct Detail: Encodable {
            let message: String
            let path: String?
        }
        let error: Detail
    }

    private static func accepted(_ status: Int, batch: RecordedBatch, duplicates: Int) -> TransportResponse {
        let body = AcceptedBody(batchID: batch.id.uuidString.lowercased(), accepted: batch.events.count + batch.aggregates.count - duplicates,
                                duplicates: duplicates)
        return TransportResponse(status: status, headers: ["Content-Type": "application/json"],
                                 body: (try? JSONEncoder().encode(body)) ?? Data())
    }

    private static func error(_ status: Int, _ message: String, path: String? = nil, retryAfter: Int? = nil) -> TransportResponse {
        var headers = ["Content-Type": "application/json"]
        if let retryAfter { headers["Retry-After"] = String(retryAfter) }
        let body = ErrorBody(error: .init(message: message, path: path))
        return TransportResponse(status: status, headers: headers, body: (try? JSONEncoder().encode(body)) ?? Data())
    }
}

extension TransportRequest {
    /// A header's value, by case-insensitive name.
    fileprivate func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
