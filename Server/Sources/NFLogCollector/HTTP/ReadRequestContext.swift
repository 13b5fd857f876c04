import Hummingbird
import NIOCore

/// The context of the routes a read token opens (stats, report, lookup, export): made only from a
/// request that proved a read token, and the only way those routes learn which app to read.
struct ReadRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The apps the request's token may read.
    let scope: ReadScope
    let channel: any Channel

    init(context: CollectorRequestContext) throws {
        // ReadTokenAuthenticator refuses first, with the precise reason; this is the backstop.
        guard case .reader(let scope)? = context.identity else {
            throw CollectorHTTPError(.unauthorized, message: "this endpoint needs a read token: Authorization: Bearer <read token>")
        }
        self.coreContext = context.coreContext
        self.scope = scope
        self.channel = context.channel
    }

    /// The app the request reads: `?app=APP`, which the token must cover, or the token's only app.
    func app(of request: Request) throws(CollectorHTTPError) -> String {
        try scope.app(requested: request.uri.queryParameters.get("app"))
    }
}
