import Foundation
import Hummingbird
import Logging
@_spi(NFLogShared) import NFLogSupport

/// The report's views for a dashboard, with a read token: the report over time
/// (`GET /v1/report/series`) and the policy the app is served (`GET /v1/report/policy`),
/// registered with the other read routes in ``register(on:)``.
extension CollectorRoutes {
    /// `?bucket=hour|day&from=MS&to=MS&app_version=V`, each optional → ``ReportSeries`` as JSON.
    func getSeries(_ request: Request, app: String) async throws -> Response {
        let query = try Self.seriesQuery(request.uri.queryParameters, now: Int64(Date().timeIntervalSince1970 * 1000))
        let series: ReportSeries
        do { series = try await store.series(app: app, query: query) } catch { throw Self.readFailure(error) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Self.json(Array(try encoder.encode(series)))
    }

    /// The series' query from `bucket`, `from`, `to` and `app_version`, its defaults taken from
    /// `now`; 400 naming the parameter at fault.
    static func seriesQuery(_ query: Parameters, now: Int64) throws(CollectorHTTPError) -> SeriesQuery {
        let bucket: SeriesBucket
        switch query.get("bucket") {
        case nil: bucket = .hour
        case let text?:
            guard let parsed = SeriesBucket(rawValue: text) else {
                throw CollectorHTTPError(.badRequest, message: "bucket must be one of \(SeriesBucket.names)", path: "bucket")
            }
            bucket = parsed
        }
        let from = try query.get("from").map { text throws(CollectorHTTPError) in try integer(text, named: "from", default: 0, in: 0...Int64.max) }
        let to = try query.get("to").map { text throws(CollectorHTTPError) in try integer(text, named: "to", default: 0, in: 0...Int64.max) }
        do throws(SeriesQuery.Invalid) {
            return try SeriesQuery(bucket: bucket, from: from, to: to, appVersion: query.get("app_version"), now: now)
        } catch {
            throw CollectorHTTPError(.badRequest, message: error.message, path: error.parameter)
        }
    }

    /// `{"app", "changed_ms", "etag", "policy"}`: what `GET /v1/policy` serves the app now (its
    /// ETag, the policy file's modification time, the document), all `null` when it serves none.
    /// 500 naming a policy file that is not a valid policy, as `GET /v1/policy` answers.
    func getServedPolicy(app: String, logger: Logger) async throws -> Response {
        var served: PolicyFiles.Served?
        if let directory = configuration.policiesDirectory { served = try servedPolicy(in: directory, app: app, logger: logger) }
        let document = served.map { [UInt8]($0.data) }
        // A policy file is UTF-8 JSON (the SDK's parser checked it); this strict parser also
        // makes sure its bytes can stand inside this answer as they are.
        if let document, let served, !Self.isObject(document) {
            throw CollectorHTTPError(.internalServerError, message: "the policy file \(served.name) cannot be shown as JSON")
        }
        var out = JSONWriter(capacity: 128 + (document?.count ?? 0))
        out.writeLiteral("{"); out.writeKey("app"); out.writeString(app)
        out.writeLiteral(","); out.writeKey("changed_ms")
        if let modified = served?.modified, let milliseconds = Int64(exactly: (modified.timeIntervalSince1970 * 1000).rounded(.down)) {
            out.writeInteger(milliseconds)
        } else {
            out.writeLiteral("null")
        }
        out.writeLiteral(","); out.writeKey("etag")
        if let served { out.writeString(PolicyFiles.etag(served.data)) } else { out.writeLiteral("null") }
        out.writeLiteral(","); out.writeKey("policy")
        if let document { out.writeRaw(document) } else { out.writeLiteral("null") }
        out.writeLiteral("}")
        return Self.json(out.bytes)
    }

    private static func isObject(_ bytes: [UInt8]) -> Bool {
        guard case .object? = try? JSONParser.parse(bytes) else { return false }
        return true
    }
}
