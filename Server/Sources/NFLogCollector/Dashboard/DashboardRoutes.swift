import HTTPTypes
import Hummingbird
@_spi(NFLogShared) import NFLogSupport

/// `GET /dashboard` (the page) and `GET /dashboard/FILE` (its script and style): no credential.
/// The page asks for a read token and sends it, as `Authorization: Bearer`, to the JSON endpoints
/// the read token opens (`/v1/apps`, `/v1/report`, `/v1/report/series`, `/v1/report/policy`):
/// the files hold no data, only the code that draws it.
///
/// Every answer carries a Content-Security-Policy that lets the page load its own files and talk
/// to its own collector only: no other host is ever contacted, and an event name that looks like
/// markup cannot run as script (the page also writes every value as text, never as HTML).
struct DashboardRoutes: Sendable {
    let files: Result<DashboardFiles, DashboardUnavailable>

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    func register(on router: Router<CollectorRequestContext>) {
        router.get(RouterPath(WireProtocol.dashboardPath)) { request, _ in try serve("index.html", request) }
        router.get(RouterPath(WireProtocol.dashboardPath + "/:file")) { request, context in
            try serve(context.parameters.get("file") ?? "", request)
        }
    }

    private func serve(_ name: String, _ request: Request) throws(CollectorHTTPError) -> Response {
        let files: DashboardFiles
        switch self.files {
        case .success(let loaded): files = loaded
        case .failure(let error): throw CollectorHTTPError(.notFound, message: "\(error)")
        }
        guard let file = files.file(named: name) else { throw CollectorHTTPError(.notFound, message: "no such file of the dashboard") }
        var headers: HTTPFields = [
            .eTag: file.etag, .cacheControl: "no-cache",
            .contentSecurityPolicy: Self.contentSecurityPolicy, .xContentTypeOptions: "nosniff",
        ]
        if PolicyFiles.matches(request.headers[.ifNoneMatch], etag: file.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.body))
    }
}
