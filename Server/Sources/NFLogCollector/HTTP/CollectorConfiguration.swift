public import Crypto
public import Foundation
@_spi(NFLogShared) package import NFLogSupport

/// How a collector listens and what it accepts.
public struct CollectorConfiguration: Sendable {
    /// The address to bind. In development mode only loopback addresses are allowed.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (the URL printed or passed to `onListening` says which).
    public var port = 8080
    /// The accepted app keys: they upload events and fetch policies, and read nothing.
    package var keys = AppKeys.development
    /// The accepted read tokens: they read stats, reports, lookups and exports, and upload
    /// nothing. Default: `dev-read-token` for app `dev` (development mode, loopback only).
    package var readTokens = ReadTokens.development
    /// The largest request body accepted as sent (compressed or not). Default: 4 MiB.
    public var maxBodyBytes = 4 * 1024 * 1024
    /// The bytes of request bodies held in memory at once, over all connections. An upload is
    /// charged for what it has sent (in pieces of 64 KiB), not the length it declares. When it is
    /// short, the slowest uploads are closed to make room (one slow is stalled or trickling: at its
    /// rate over the last second its body would not be in within a `bodyRateWindow`); when none
    /// is slow, an upload waits 0.2 s for room, then gets 503 with `Retry-After` and the
    /// connection closes, the rest of its body unread. Default: 64 MiB.
    package var maxInflightBodyBytes = 64 * 1024 * 1024
    /// Uploads (`POST /v1/events`) from one client address in progress at once (an IPv4 address,
    /// or an IPv6 /64; see ``trustedProxies``). Past it a slow one of that client's is closed to
    /// make room, or, when none is slow, the new one gets 429 with `Retry-After` and the
    /// connection closes. Default: 16 (a device sends one batch at a time; this leaves room for
    /// many devices behind one NAT).
    package var maxUploadsPerClient = 16
    /// The bytes of upload bodies one client address may hold in memory at once; past it, as for
    /// ``maxUploadsPerClient``. `nil` (the default): an eighth of ``maxInflightBodyBytes`` (8 MiB,
    /// two of the largest bodies), so that holding the whole budget takes at least eight addresses.
    package var maxInflightBytesPerClient: Int?
    /// The reverse proxies whose `X-Forwarded-For` names the client for the per-client limits.
    /// Default: none, so the connection's peer address is the client.
    package var trustedProxies = TrustedProxies.none
    /// The largest body accepted once inflated, against gzip bombs. Default: 16 MiB.
    public var maxInflatedBytes = 16 * 1024 * 1024
    /// The most events one batch may hold. Default: 10,000.
    public var maxEventsPerBatch = 10_000
    /// Nesting and string-length limits for the JSON parser.
    package var json = JSONParser.Limits()
    /// Where policies are read from, per request: `<app>.json`, else `default.json`.
    /// `nil`: `GET /v1/policy` answers 404.
    public var policiesDirectory: URL?
    /// When set, every policy served carries its Ed25519 signature in `X-NFLog-Signature`.
    public var policySigningKey: Curve25519.Signing.PrivateKey?
    /// Requests allowed per app key, over all its authenticated endpoints; past it, 429 with
    /// `Retry-After`. `nil` (the default for a collector made in code, such as tests' and the
    /// demo's in-process one): no limit. `nflog-collector serve` sets one unless told not to.
    package var rateLimit: RateLimit?
    /// When set, the collector serves HTTPS only, with this certificate and key.
    package var tls: CollectorTLS?
    /// How many connections at once, and how long and how slowly each may take.
    package var connections = ConnectionLimits()
    /// How long events are kept, by the collector's receive time, and the hourly rollups, by the
    /// devices' hours; `nil` (the default): both forever.
    package var retention: Retention?

    /// The clock the in-flight budget judges uploads' rates by; tests set it by hand.
    var uploadClock = UploadClock.continuous

    public init() {}

    /// ``maxInflightBytesPerClient``, or its default.
    var inflightBytesPerClient: Int { maxInflightBytesPerClient ?? max(1, maxInflightBodyBytes / 8) }

    static let loopbackHosts: Set<String> = ["127.0.0.1", "::1", "localhost"]
}

/// Why a collector cannot start.
package enum CollectorError: Error, Sendable, CustomStringConvertible {
    /// Without a keys file, anyone knows the key (`dev-key`): such a collector must not be reachable.
    case developmentModeNeedsLoopback(host: String)
    /// Everyone knows `dev-read-token`: a collector that accepts it must not be reachable.
    case developmentReadTokenNeedsLoopback(host: String)
    /// Retention is 1 to ``Retention/maxDays`` days.
    case invalidRetentionDays(Int)
    /// Rollups are kept from the events' days (the first value: at least `eventDays`) to ``Retention/maxDays``.
    case invalidRollupRetentionDays(Int, eventDays: Int)

    package var description: String {
        switch self {
        case .developmentModeNeedsLoopback(let host):
            "refusing to listen on \(host) in development mode (no --keys file): anyone could upload with dev-key. Use --host 127.0.0.1, or give --keys FILE."
        case .developmentReadTokenNeedsLoopback(let host):
            "refusing to listen on \(host) while the development read token dev-read-token is accepted: anyone could read. Use --host 127.0.0.1, or give --read-tokens FILE."
        case .invalidRetentionDays(let days):
            "--retention-days must be between 1 and \(Retention.maxDays) (got \(days)); leave it out to keep every event"
        case .invalidRollupRetentionDays(let days, let eventDays):
            "--rollup-retention-days must be between --retention-days (\(eventDays)) and \(Retention.maxDays) (got \(days)): the report reads the rollups, so they outlive the events they count"
        }
    }
}
