import HTTPTypes
import Hummingbird
import HummingbirdAuth
@_spi(NFLogShared) import NFLogSupport

/// Authenticates the routes an app key opens: the key in `X-NFLog-Key` must be one of
/// ``CollectorConfiguration/keys``; then the key's rate limit applies.
///
/// 401 for a missing or unknown key, 403 for a read token (it cannot upload), 429 with
/// `Retry-After` past the key's rate limit. Unknown keys never reach the limiter, so they cannot
/// spend a real key's allowance, and are told 401, not 429.
struct AppKeyAuthenticator: AuthenticatorMiddleware {
    typealias Context = CollectorRequestContext
    static let header = WireProtocol.appKeyHeader
    // A valid token, so this never falls back.
    static let headerName = HTTPField.Name(WireProtocol.appKeyHeader) ?? .authorization

    let keys: AppKeys
    /// One token bucket per app key, when the configuration limits requests.
    let limiter: RateLimiter?

    func authenticate(request: Request, context: Context) async throws -> Credential? {
        guard let key = request.headers[Self.headerName], !key.isEmpty else {
            if request.headers[.authorization] != nil {
                throw CollectorHTTPError(.forbidden, message: "a read token cannot upload or fetch policies: send the app's key in the \(Self.header) header")
            }
            throw CollectorHTTPError(.unauthorized, message: "missing app key: send it in the \(Self.header) header")
        }
        guard let entry = keys.index(forKey: key) else {
            throw CollectorHTTPError(.unauthorized, message: "unknown app key")
        }
        if let limiter, let wait = limiter.take(key: entry) {
            throw CollectorHTTPError(.tooManyRequests,
                                     message: "too many requests for this app key (limit: \(limiter.limit)); retry in \(wait) s",
                                     headers: [.retryAfter: String(wait)])
        }
        return .app(keys.app(at: entry))
    }
}
