/// What a request proved to be, set in ``CollectorRequestContext/identity`` by an authenticator
/// middleware before any route runs.
enum Credential: Sendable {
    /// An app's key (`X-NFLog-Key`): uploads events and fetches the app's policy, nothing else.
    case app(String)
    /// A read token (`Authorization: Bearer …`): reads stats, reports, lookups and exports of
    /// the apps in its scope, and cannot upload.
    case reader(ReadScope)
}
