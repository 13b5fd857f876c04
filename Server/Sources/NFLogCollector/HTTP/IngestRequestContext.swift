import Hummingbird
import NIOCore

/// The context of the routes an app key opens (`POST /v1/events`, `GET /v1/policy`): made only
/// from a request that proved an app key, so ``app`` is always the key's app.
struct IngestRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The app the request's key belongs to.
    let app: String
    let channel: any Channel

    init(context: CollectorRequestContext) throws {
        // AppKeyAuthenticator refuses first, with the precise reason; this is the backstop.
        guard case .app(let app)? = context.identity else {
            throw CollectorHTTPError(.unauthorized, message: "this endpoint needs an app key in the \(AppKeyAuthenticator.header) header")
        }
        self.coreContext = context.coreContext
        self.app = app
        self.channel = context.channel
    }
}
