/// The names both ends of the wire protocol agree on (docs/PROTOCOL.md).
@_spi(NFLogShared) public enum WireProtocol {
    /// The batch format version this code writes and reads.
    @_spi(NFLogShared) public static let version = 1
    /// Where batches are posted.
    @_spi(NFLogShared) public static let eventsPath = "/v1/events"
    /// Per-app totals.
    @_spi(NFLogShared) public static let statsPath = "/v1/stats"
    /// Liveness.
    @_spi(NFLogShared) public static let healthPath = "/health"
    /// The analysis of an app's events.
    @_spi(NFLogShared) public static let reportPath = "/v1/report"
    /// The report over time, bucket by bucket.
    @_spi(NFLogShared) public static let reportSeriesPath = "/v1/report/series"
    /// The policy the collector serves an app, for readers.
    @_spi(NFLogShared) public static let reportPolicyPath = "/v1/report/policy"
    /// Which of a list of event uuids an app has stored (for receipt audits).
    @_spi(NFLogShared) public static let lookupPath = "/v1/events/lookup"
    /// The policy for the requesting app.
    @_spi(NFLogShared) public static let policyPath = "/v1/policy"
    /// The header carrying a policy's detached Ed25519 signature (base64).
    @_spi(NFLogShared) public static let signatureHeader = "X-NFLog-Signature"
    /// The header that carries the app key.
    @_spi(NFLogShared) public static let appKeyHeader = "X-NFLog-Key"
    /// The key a collector accepts in development mode (no `--keys` file).
    @_spi(NFLogShared) public static let developmentKey = "dev-key"
    /// The read token a collector accepts in development mode, for the development key's app.
    @_spi(NFLogShared) public static let developmentReadToken = "dev-read-token"
    /// Every stored event of an app, page by page (JSON lines), for read tokens.
    @_spi(NFLogShared) public static let exportPath = "/v1/export"
    /// The apps a read token may read.
    @_spi(NFLogShared) public static let appsPath = "/v1/apps"
    /// The dashboard's page (no credential: it asks for a read token); its files are below it.
    @_spi(NFLogShared) public static let dashboardPath = "/dashboard"
    /// The header of an export page that names the `after` of the next page.
    @_spi(NFLogShared) public static let nextPageHeader = "X-NFLog-Next-After"
}
