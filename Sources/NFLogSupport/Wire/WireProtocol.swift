/// The names both ends of the wire protocol agree on (docs/PROTOCOL.md).
public enum WireProtocol {
    /// The batch format version this code writes and reads.
    public static let version = 1
    /// Where batches are posted.
    public static let eventsPath = "/v1/events"
    /// Per-app totals.
    public static let statsPath = "/v1/stats"
    /// Liveness.
    public static let healthPath = "/health"
    /// The analysis of an app's events.
    public static let reportPath = "/v1/report"
    /// Which of a list of event uuids an app has stored (for receipt audits).
    public static let lookupPath = "/v1/events/lookup"
    /// The policy for the requesting app.
    public static let policyPath = "/v1/policy"
    /// The header carrying a policy's detached Ed25519 signature (base64).
    public static let signatureHeader = "X-NFLog-Signature"
    /// The header that carries the app key.
    public static let appKeyHeader = "X-NFLog-Key"
    /// The key a collector accepts in development mode (no `--keys` file).
    public static let developmentKey = "dev-key"
    /// The read token a collector accepts in development mode, for the development key's app.
    public static let developmentReadToken = "dev-read-token"
    /// Every stored event of an app, page by page (JSON lines), for read tokens.
    public static let exportPath = "/v1/export"
    /// The header of an export page that names the `after` of the next page.
    public static let nextPageHeader = "X-NFLog-Next-After"
}
