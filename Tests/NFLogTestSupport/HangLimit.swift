/// How long a test waits for an outcome (a completion, a delivery, a row, a closed connection)
/// before calling it a hang. Not a margin: the outcome is what is checked, and a loaded machine
/// (the suites in parallel on two cores beside other work) may take many times longer than an
/// idle one; only something stuck takes this long.
public let hangLimit: Duration = .seconds(300)

/// ``hangLimit`` in seconds: also the request timeout of the tests' HTTP clients, which would
/// otherwise give up on a collector that a loaded machine makes slow to answer (and send again).
public let hangLimitSeconds = Double(hangLimit.components.seconds)
