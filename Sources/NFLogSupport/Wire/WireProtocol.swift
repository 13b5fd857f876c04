/// The names both ends of the wire protocol agree on (docs/PROTOCOL.md).
package enum WireProtocol {
    /// The batch format version this code writes and reads.
    package static let version = 1
    /// Where batches are posted.
    package static let eventsPath = "/v1/events"
    /// Per-app totals.
    package static let statsPath = "/v1/stats"
    /// Liveness.
    package static let healthPath = "/health"
    /// The analysis of an app's events.
    package static let reportPath = "/v1/report"
    /// The report over time, bucket by bucket.
    package static let reportSeriesPath = "/v1/report/series"
    /// The policy the collector serves an app, for readers.
    package static let reportPolicyPath = "/v1/report/policy"
    /// Which of a list of event uuids an app has stored (for receipt audits).
    package static let lookupPath = "/v1/events/lookup"
    /// The policy for the requesting app.
    package static let policyPath = "/v1/policy"
    /// The header carrying a policy's detached Ed25519 signature (base64).
    package static let signatureHeader = "X-NFLog-Signature"
    /// The header that carries the app key.
    package static let appKeyHeader = "X-NFLog-Key"
    /// The key a collector accepts in development mode (no `--keys` file).
    package static let developmentKey = "dev-key"
    /// The read token a collector accepts in development mode, for the development key's app.
    package static let developmentReadToken = "dev-read-token"
    /// Every stored event of an app, page by page (JSON lines), for read tokens.
    package static let exportPath = "/v1/export"
    /// The apps a read token may read.
    package static let appsPath = "/v1/apps"
    /// The dashboard's page (no credential: it asks for a read token); its files are below it.
    package static let dashboardPath = "/dashboard"
    /// The header of an export page that names the `after` of the next page.
    package static let nextPageHeader = "X-NFLog-Next-After"
}
