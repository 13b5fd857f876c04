import Hummingbird
import HummingbirdAuth
import NIOCore

/// The context of every request: Hummingbird's core, and the ``Credential`` an authenticator
/// middleware found (hummingbird-auth's pattern). Routes never read it directly: they are
/// registered in groups whose child context (``IngestRequestContext``, ``ReadRequestContext``)
/// cannot be made without the right credential, so a new route cannot forget the check.
struct CollectorRequestContext: AuthRequestContext, RequestContext {
    var coreContext: CoreRequestContextStorage
    var identity: Credential?
    /// The request's connection: its peer address counts for the per-client limits, and closing
    /// it stops a slow upload that must make room (``BodyBudget``).
    let channel: any Channel

    init(source: Source) {
        coreContext = .init(source: source)
        identity = nil
        channel = source.channel
    }
}
