/// How a ``FaultProxy`` behaves: where it forwards, how often and how it breaks requests.
public struct FaultProxyConfiguration: Sendable {
    public var upstreamHost: String
    public var upstreamPort: Int
    /// The share of faultable requests that get a fault, from 0 to 1.
    public var faultRate: Double = 0.3
    /// The kinds drawn from, with equal chances.
    public var faults: [FaultKind] = FaultKind.allCases
    /// Seeds the decisions: the same seed and the same order of requests give the same faults.
    public var seed: UInt64 = 1
    /// Methods whose requests may be faulted (`nil`: every method).
    public var methods: Set<String>? = ["POST"]
    /// The `Retry-After` seconds of a 503 or 429.
    public var retryAfterSeconds = 1
    /// The gap between the bytes of a ``FaultKind/slowResponse``.
    public var slowByteInterval: Duration = .milliseconds(20)
    /// How long a ``FaultKind/stall`` (or a half-closed connection) is held open at most.
    public var stallLimit: Duration = .seconds(30)
    /// A request arriving this close to either end of a `Retry-After` is not counted as early: at
    /// the start it may have left the client before the answer arrived (another connection), at
    /// the end clocks and scheduling are not exact.
    public var retryAfterGrace: Duration = .milliseconds(250)
    /// Requests a client may already have had on their way when a `Retry-After` reached it (its
    /// concurrent uploads less the one answered): those arriving inside the window, however late
    /// a loaded machine delivers them, are not counted as early. A count, not a time margin.
    public var retryAfterInFlight = 1
    /// The port to listen on, on 127.0.0.1 (0: any free port).
    public var listenPort = 0
    /// Told of every request as it is decided: its number, method, target and fault (`nil`: none).
    public var trace: (@Sendable (_ number: Int, _ method: String, _ uri: String, _ fault: FaultKind?) -> Void)?

    public init(upstreamHost: String = "127.0.0.1", upstreamPort: Int) {
        self.upstreamHost = upstreamHost
        self.upstreamPort = upstreamPort
    }
}
