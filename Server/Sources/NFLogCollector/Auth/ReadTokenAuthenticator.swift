import HTTPTypes
import Hummingbird
import HummingbirdAuth

/// Authenticates the routes a read token opens: `Authorization: Bearer <token>` must be one of
/// ``CollectorConfiguration/readTokens``.
///
/// 403 for an app key (it only uploads: it ships inside every copy of the app), 401 with
/// `WWW-Authenticate: Bearer` (RFC 6750) for a missing, malformed or unknown token.
struct ReadTokenAuthenticator: AuthenticatorMiddleware {
    typealias Context = CollectorRequestContext

    let tokens: ReadTokens

    func authenticate(request: Request, context: Context) async throws -> Credential? {
        guard request.headers[.authorization] != nil else {
            if request.headers[AppKeyAuthenticator.headerName] != nil {
                throw CollectorHTTPError(.forbidden, message: "an app key cannot read: this endpoint needs a read token in Authorization: Bearer <read token> (nflog-collector keygen --read-token APP --read-tokens FILE makes one)")
            }
            throw Self.unauthorized("missing read token: send Authorization: Bearer <read token>")
        }
        guard let bearer = request.headers.bearer, !bearer.token.isEmpty else {
            throw Self.unauthorized("the Authorization header must be Bearer <read token>")
        }
        guard let scope = tokens.scope(forToken: bearer.token) else {
            throw Self.unauthorized(tokens.count == 0
                ? "this collector accepts no read tokens (start it with --read-tokens FILE)"
                : "unknown read token")
        }
        return .reader(scope)
    }

    private static func unauthorized(_ message: String) -> CollectorHTTPError {
        CollectorHTTPError(.unauthorized, message: message, headers: [.wwwAuthenticate: "Bearer"])
    }
}
