import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
@_spi(NFLogShared) import NFLogSupport
import NIOCore

/// The collector's HTTP API (docs/PROTOCOL.md): `POST /v1/events` and `GET /v1/policy` with an
/// app key; `GET /v1/apps`, `GET /v1/stats`, `GET /v1/report`, `POST /v1/events/lookup` and
/// `GET /v1/export` with a read token; `GET /health` and the dashboard's files
/// (``DashboardRoutes``) with nothing.
///
/// Every refusal is a ``CollectorHTTPError`` with a message saying what is wrong, rendered as
/// `{"error":{"message":"…"}}` (``CollectorErrorMiddleware`` sees to it for errors from
/// elsewhere); nothing is stored for a refused request.
struct CollectorRoutes: Sendable {
    let store: any EventStore
    let configuration: CollectorConfiguration
    let decoder: BatchDecoder
    let signatureHeader: HTTPField.Name
    /// One token bucket per app key, when the configuration limits requests.
    let limiter: RateLimiter?
    /// Recurring problems, logged once per interval each, with a count.
    let problems: ThrottledLog
    /// Whether the store could write at the last try; what `/health` reports.
    let health = StoreHealth()
    /// The bytes of request bodies held at once, in all and per client.
    let bodies: BodyBudget
    /// How long an upload waits for room in ``bodies`` when nothing slow can be closed to make
    /// it. Short: while it waits, parts of its body pile up in memory, which a crowd would multiply.
    static let bodyPatience: Duration = .milliseconds(200)
    static let forwardedFor = HTTPField.Name("X-Forwarded-For") ?? .via  // a valid name: never falls back

    /// - Parameter logger: where the uploads closed to make room are reported (once a minute).
    init(store: any EventStore, configuration: CollectorConfiguration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        let problems = ThrottledLog(interval: .seconds(60))
        self.problems = problems
        self.limiter = configuration.rateLimit.map { RateLimiter(limit: $0, keys: configuration.keys.count) }
        self.bodies = BodyBudget(limits: .init(capacity: configuration.maxInflightBodyBytes,
                                               uploadsPerClient: configuration.maxUploadsPerClient,
                                               bytesPerClient: configuration.inflightBytesPerClient,
                                               window: configuration.connections.bodyRateWindow),
                                 clock: configuration.uploadClock) { client in
            problems.log("closed-for-room", level: .warning, logger: logger,
                         "closed a slow upload from \(client.map(\.description) ?? "a reader") to make room for others (--max-inflight-bytes, per-client limits)")
        }
        var decoder = BatchDecoder()
        decoder.maxEvents = configuration.maxEventsPerBatch
        self.decoder = decoder
        self.signatureHeader = HTTPField.Name(WireProtocol.signatureHeader) ?? .authorization  // a valid token: never used
    }

    /// Each route is registered in the group of its credential: the group's authenticator
    /// middleware proves it, and the group's child context carries what it proved.
    func register(on router: Router<CollectorRequestContext>) {
        router.add(middleware: CollectorErrorMiddleware())
        router.get(RouterPath(WireProtocol.healthPath)) { _, _ in await getHealth() }
        DashboardRoutes(files: DashboardFiles.shared).register(on: router)

        let ingest = router.group()
            .add(middleware: AppKeyAuthenticator(keys: configuration.keys, limiter: limiter))
            .group(context: IngestRequestContext.self)
        ingest.post(RouterPath(WireProtocol.eventsPath)) { request, context in
            try await postEvents(request, app: context.app, channel: context.channel, logger: context.logger)
        }
        ingest.get(RouterPath(WireProtocol.policyPath)) { request, context in try await getPolicy(request, app: context.app, logger: context.logger) }

        let read = router.group()
            .add(middleware: ReadTokenAuthenticator(tokens: configuration.readTokens))
            .group(context: ReadRequestContext.self)
        read.get(RouterPath(WireProtocol.appsPath)) { _, context in try await getApps(scope: context.scope) }
        read.get(RouterPath(WireProtocol.statsPath)) { request, context in try await getStats(app: context.app(of: request)) }
        read.get(RouterPath(WireProtocol.reportPath)) { request, context in try await getReport(request, app: context.app(of: request)) }
        read.post(RouterPath(WireProtocol.lookupPath)) { request, context in
            try await lookup(request, app: context.app(of: request), channel: context.channel, logger: context.logger)
        }
        read.get(RouterPath(WireProtocol.exportPath)) { request, context in try await export(request, app: context.app(of: request)) }
        read.get(RouterPath(WireProtocol.reportSeriesPath)) { request, context in try await getSeries(request, app: context.app(of: request)) }
        read.get(RouterPath(WireProtocol.reportPolicyPath)) { request, context in
            try await getServedPolicy(app: context.app(of: request), logger: context.logger)
        }
    }

    private func postEvents(_ request: Request, app: String, channel: any Channel, logger: Logger) async throws -> Response {
        let declared = request.headers[.contentLength].flatMap(Int.init)
        if let length = declared, length > configuration.maxBodyBytes {
            throw CollectorHTTPError(.contentTooLarge, message: "the body is \(length) bytes; the limit is \(configuration.maxBodyBytes)")
        }
        let client = configuration.trustedProxies.client(peer: channel.remoteAddress?.ipAddress,
                                                         forwardedFor: request.headers[values: Self.forwardedFor])
        return try await receive(request, upTo: configuration.maxBodyBytes, client: client, channel: channel,
                                 refusing: "uploads", logger: logger) { body in
            try await ingest(body, encoding: request.headers[.contentEncoding], app: app, logger: logger)
        }
    }

    /// Decodes and stores a received upload's body.
    private func ingest(_ received: [UInt8], encoding: String?, app: String, logger: Logger) async throws -> Response {
        var body = received

        switch encoding?.lowercased().trimmingCharacters(in: .whitespaces) {
        case nil, "", "identity":
            guard body.count <= configuration.maxInflatedBytes else {
                throw CollectorHTTPError(.contentTooLarge, message: "the body is larger than \(configuration.maxInflatedBytes) bytes")
            }
        case "gzip", "x-gzip":  // RFC 9110 §8.4.1.3: x-gzip is gzip
            do {
                body = try Gzip.decompress(body, maxOutputBytes: configuration.maxInflatedBytes)
            } catch .tooLarge(let limit) {
                throw CollectorHTTPError(.contentTooLarge, message: "the gzip body inflates to more than \(limit) bytes")
            } catch {
                throw CollectorHTTPError(.badRequest, message: "Content-Encoding is gzip but the body is \(error)")
            }
        case _?:
            // Not echoed: the sender knows what it sent, and an error body repeats no header.
            throw CollectorHTTPError(.unsupportedMediaType, message: "this Content-Encoding is not supported; use gzip or identity")
        }

        let batch: Batch
        do {
            var limits = configuration.json
            limits.maxDepth = max(limits.maxDepth, 4)
            batch = try decoder.decode(body, limits: limits)
        } catch {
            // The path tells a sender whether one event is at fault (`events[3]…`) or the batch;
            // too many events is 413, like too many bytes: the sender splits the batch.
            throw CollectorHTTPError(error.isOverLimit ? .contentTooLarge : .badRequest, message: "invalid batch: \(error)",
                                     path: error.path.isEmpty ? nil : error.path)
        }
        let result: StoreResult
        do {
            result = try await store.store(batch, app: app, receivedAt: Int64(Date().timeIntervalSince1970 * 1000))
        } catch {
            // Nothing was stored (the transaction rolled back); the sender will retry. The
            // server's own fault: an error line, once a minute with a count, and /health says so.
            health.failed("the event store cannot write: \(error)")
            problems.log("store", level: .error, logger: logger, "the event store could not store a batch; answering 503: \(error)")
            throw CollectorHTTPError(.serviceUnavailable, message: "the event store is unavailable; retry later", headers: [.retryAfter: "5"])
        }
        health.succeeded()
        var out = JSONWriter(capacity: 128)
        out.writeLiteral("{"); out.writeKey("batch_id"); out.writeUUID(batch.id)
        out.writeLiteral(","); out.writeKey("accepted"); out.writeInteger(Int64(result.accepted))
        out.writeLiteral(","); out.writeKey("duplicates"); out.writeInteger(Int64(result.duplicates))
        out.writeLiteral("}")
        return Self.json(out.bytes)
    }

    private func getStats(app: String) async throws -> Response {
        let stats: CollectorStats
        do { stats = try await store.stats(app: app) } catch { throw Self.readFailure(error) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Self.json(Array(try encoder.encode(stats)))
    }

    /// `{"apps": [...]}`: the apps the token may read, sorted: those it names, or every app with
    /// stored data for a token of every app (the dashboard's list to choose from).
    private func getApps(scope: ReadScope) async throws -> Response {
        let apps: [String]
        switch scope {
        case .allApps:
            do { apps = try await store.apps().sorted() } catch { throw Self.readFailure(error) }
        case .apps(let named):
            apps = Set(named).sorted()
        }
        var out = JSONWriter(capacity: 16 + apps.reduce(0) { $0 + $1.utf8.count + 4 })
        out.writeLiteral("{"); out.writeKey("apps"); out.writeLiteral("[")
        for (index, app) in apps.enumerated() {
            if index > 0 { out.writeLiteral(",") }
            out.writeString(app)
        }
        out.writeLiteral("]}")
        return Self.json(out.bytes)
    }

    /// The app's policy with an ETag (and a signature when a key is configured); 304 when the
    /// client already has it; 404 when there is none.
    private func getPolicy(_ request: Request, app: String, logger: Logger) async throws -> Response {
        guard let directory = configuration.policiesDirectory else {
            throw CollectorHTTPError(.notFound, message: "this collector serves no policies")
        }
        guard let body = try servedPolicy(in: directory, app: app, logger: logger)?.data else {
            throw CollectorHTTPError(.notFound, message: "there is no policy for this app")
        }
        let etag = PolicyFiles.etag(body)
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "no-cache"]
        if PolicyFiles.matches(request.headers[.ifNoneMatch], etag: etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json"
        if let key = configuration.policySigningKey {
            do { headers[signatureHeader] = try key.signature(for: body).base64EncodedString() } catch {
                throw CollectorHTTPError(.internalServerError, message: "the policy could not be signed")
            }
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The policy file `directory` serves `app` now, or `nil`; 500 naming a file that is not a
    /// valid policy.
    func servedPolicy(in directory: URL, app: String, logger: Logger) throws(CollectorHTTPError) -> PolicyFiles.Served? {
        do { return try PolicyFiles(directory: directory).policy(for: app) } catch {
            // The operator's fault, asked about by every device: logged once a minute per file.
            problems.log("policy:" + error.file, level: .error, logger: logger, error.message)
            throw CollectorHTTPError(.internalServerError, message: error.message)
        }
    }

    /// `{"status":"ok"}`, or 503 `{"status":"degraded","reason":"…"}` while the store cannot
    /// write (a full disk, an I/O error): a load balancer stops sending uploads that would fail.
    private func getHealth() async -> Response {
        guard let failure = await health.failure(probing: { try await store.probeWrite() }) else {
            return Self.json(#"{"status":"ok"}"#)
        }
        var out = JSONWriter(capacity: 64 + failure.utf8.count)
        out.writeLiteral("{"); out.writeKey("status"); out.writeString("degraded")
        out.writeLiteral(","); out.writeKey("reason"); out.writeString(failure)
        out.writeLiteral("}")
        return Response(status: .serviceUnavailable, headers: [.contentType: "application/json", .retryAfter: "5"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: out.bytes)))
    }

    /// `?from=MS&to=MS&app_version=V&dimension=KEY=VALUE`, each optional, narrow the report: the
    /// time range (from inclusive, to exclusive) and the app version select the events, spans,
    /// sessions and aggregates, the dimension the aggregates.
    private func getReport(_ request: Request, app: String) async throws -> Response {
        let filter = try Self.reportFilter(request.uri.queryParameters)
        let report: AnalyticsReport
        do { report = try await store.report(app: app, filter: filter) } catch { throw Self.readFailure(error) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Self.json(Array(try encoder.encode(report)))
    }

    /// `{"uuids": [...]}` (at most 10,000) → `{"found": N, "missing": [...]}`: an audit of receipts.
    private func lookup(_ request: Request, app: String, channel: any Channel, logger: Logger) async throws -> Response {
        // A read token's request: the in-flight budget applies, the per-client limits do not
        // (read tokens are the operator's own, as for the rate limit).
        try await receive(request, upTo: 1 << 20, client: nil, channel: channel, refusing: "requests", logger: logger) { body in
            try await lookup(body, app: app)
        }
    }

    private func lookup(_ body: [UInt8], app: String) async throws -> Response {
        let document: JSONValue
        do { document = try JSONParser.parse(body) } catch {
            throw CollectorHTTPError(.badRequest, message: "malformed JSON: \(error)")
        }
        guard case .object(let object) = document, case .array(let values)? = object["uuids"], values.count <= 10_000 else {
            throw CollectorHTTPError(.badRequest, message: "the body must be {\"uuids\": [...]} with at most 10000 uuids", path: "uuids")
        }
        var ids: [UUID] = []
        for (index, value) in values.enumerated() {
            guard case .string(let text) = value, let id = UUID(canonical: text) else {
                throw CollectorHTTPError(.badRequest, message: "uuids[\(index)] is not a UUID", path: "uuids[\(index)]")
            }
            ids.append(id)
        }
        let found: Set<UUID>
        do { found = try await store.storedIDs(app: app, among: ids) } catch { throw Self.readFailure(error) }
        var out = JSONWriter(capacity: 64 + 40 * (ids.count - found.count))
        out.writeLiteral("{"); out.writeKey("found"); out.writeInteger(Int64(found.count))
        out.writeLiteral(","); out.writeKey("missing"); out.writeLiteral("[")
        var first = true
        for id in ids where !found.contains(id) {
            if !first { out.writeLiteral(",") }
            first = false
            out.writeUUID(id)
        }
        out.writeLiteral("]}")
        return Self.json(out.bytes)
    }

    /// `?after=ROW&limit=N` → up to N of the app's events after row ROW, oldest first, one JSON
    /// object per line (the export command's format); `X-NFLog-Next-After` names the next page's
    /// `after` when the page is full. Pages keep each read short (the store's read time limit)
    /// and the answer's memory bounded, whatever the app's size.
    /// `?kind=aggregates` pages the aggregates instead (their own row numbers); `kind=events` is
    /// the default.
    private func export(_ request: Request, app: String) async throws -> Response {
        let query = request.uri.queryParameters
        let after = try Self.integer(query.get("after"), named: "after", default: 0, in: 0...Int64.max)
        let limit = try Self.integer(query.get("limit"), named: "limit", default: 1_000, in: 1...Int64(Self.maxExportPage))
        let aggregates: Bool
        switch query.get("kind") {
        case nil, "events": aggregates = false
        case "aggregates": aggregates = true
        case _?: throw CollectorHTTPError(.badRequest, message: "kind must be events or aggregates", path: "kind")
        }
        let page: ExportPage
        do {
            page = aggregates ? try await store.exportAggregatePage(app: app, after: after, limit: Int(limit))
                              : try await store.exportPage(app: app, after: after, limit: Int(limit))
        } catch { throw Self.readFailure(error) }
        var headers: HTTPFields = [.contentType: "application/x-ndjson"]
        if page.count == Int(limit), let last = page.last {
            headers[Self.nextPageHeader] = String(last)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: page.lines)))
    }

    /// The most events one export page holds.
    static let maxExportPage = 10_000
    // A valid token, so this never falls back.
    static let nextPageHeader = HTTPField.Name(WireProtocol.nextPageHeader) ?? .contentLocation

    /// A query parameter that must be an integer within `range`; 400 naming it otherwise.
    static func integer(_ text: String?, named name: String, default value: Int64, in range: ClosedRange<Int64>) throws(CollectorHTTPError) -> Int64 {
        guard let text else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw CollectorHTTPError(.badRequest, message: "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)", path: name)
        }
        return number
    }

    /// The report's filter from `from`, `to`, `app_version` and `dimension`; 400 naming the
    /// parameter at fault.
    static func reportFilter(_ query: Parameters) throws(CollectorHTTPError) -> ReportFilter {
        var filter = ReportFilter()
        if let from = query.get("from") { filter.from = try integer(from, named: "from", default: 0, in: 0...Int64.max) }
        if let to = query.get("to") { filter.to = try integer(to, named: "to", default: 0, in: 0...Int64.max) }
        if let from = filter.from, let to = filter.to, to < from {
            throw CollectorHTTPError(.badRequest, message: "to must not be before from", path: "to")
        }
        if let version = query.get("app_version") {
            guard ReportFilter.isValidAppVersion(version) else {
                throw CollectorHTTPError(.badRequest, message: "app_version must be 1 to 256 bytes", path: "app_version")
            }
            filter.appVersion = version
        }
        if let text = query.get("dimension") {
            guard let dimension = ReportFilter.Dimension(parsing: text) else {
                throw CollectorHTTPError(.badRequest, message: "dimension must be KEY=VALUE: a key of 1 to 256 bytes, a value of at most 256",
                                         path: "dimension")
            }
            filter.dimension = dimension
        }
        return filter
    }

    /// A read that failed: over the store's read time limit (the question is too large for one
    /// request now), the rollups still being built (an upgraded store), or the store unavailable. 503 with `Retry-After` either way: nothing changed.
    static func readFailure(_ error: any Error) -> CollectorHTTPError {
        if let error = error as? ReadTimeLimitExceeded {
            return CollectorHTTPError(.serviceUnavailable, message: "the read was stopped: \(error)", headers: [.retryAfter: "30"])
        }
        if let error = error as? RollupsIncomplete {
            return CollectorHTTPError(.serviceUnavailable, message: "\(error)", headers: [.retryAfter: "10"])
        }
        return CollectorHTTPError(.serviceUnavailable, message: "the event store is unavailable; retry later", headers: [.retryAfter: "5"])
    }

    /// Reads a request's body against ``bodies`` and answers with `handle`, holding the body's
    /// room until then. Refused room: 429 past the client's share (`client` nil: no share), 503
    /// past the whole budget, each with `Retry-After`, and the connection closes, so the rest of
    /// the body is left unread rather than drained into memory (logged once a minute).
    private func receive(_ request: Request, upTo limit: Int, client: ClientAddress?, channel: any Channel, refusing what: String,
                         logger: Logger, handle: ([UInt8]) async throws -> Response) async throws -> Response {
        let declared = request.headers[.contentLength].flatMap(Int.init)
        let expected = min(limit, max(0, declared ?? limit))
        let ticket: BodyBudget.Ticket
        switch bodies.open(client: client, expected: expected, close: { channel.close(promise: nil) }) {
        case .success(let opened): ticket = opened
        case .failure(let refusal): throw refusalError(refusal, client: client, refusing: what, logger: logger)
        }
        defer { bodies.close(ticket) }  // held until the answer
        let body = try await BodyChunks.collect(request.body, declared: declared, upTo: limit, budget: bodies, ticket: ticket,
                                                patience: Self.bodyPatience) { refusal in
            refusalError(refusal, client: client, refusing: what, logger: logger)
        }
        bodies.finish(ticket)
        return try await handle(body)
    }

    private func refusalError(_ refusal: BodyBudget.Refusal, client: ClientAddress?, refusing what: String, logger: Logger) -> CollectorHTTPError {
        let client = client ?? .unknown
        switch refusal {
        case .clientUploads:
            problems.log("client-uploads", level: .warning, logger: logger,
                         "refusing an upload from \(client): \(configuration.maxUploadsPerClient) of its uploads are in progress (--max-uploads-per-client)")
            return CollectorHTTPError(.tooManyRequests,
                                      message: "\(client) has \(configuration.maxUploadsPerClient) uploads in progress, the most allowed at once; retry later",
                                      headers: [.retryAfter: "2", .connection: "close"])
        case .clientBytes:
            problems.log("client-bytes", level: .warning, logger: logger,
                         "refusing an upload from \(client): its uploads hold \(configuration.inflightBytesPerClient) bytes (--max-inflight-bytes-per-client)")
            return CollectorHTTPError(.tooManyRequests,
                                      message: "\(client) is sending \(configuration.inflightBytesPerClient) bytes of uploads at once, the most allowed; retry later",
                                      headers: [.retryAfter: "2", .connection: "close"])
        case .full, .closed:
            // Closed: its connection is closed already and this answer goes nowhere.
            problems.log("bodies", level: .warning, logger: logger,
                         "refusing \(what): \(configuration.maxInflightBodyBytes) bytes of bodies are being received (--max-inflight-bytes)")
            return CollectorHTTPError(.serviceUnavailable, message: "the collector is receiving too many \(what) at once; retry later",
                                      headers: [.retryAfter: "2", .connection: "close"])
        }
    }

    static func json(_ text: String) -> Response { json(Array(text.utf8)) }

    static func json(_ bytes: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
