import Foundation
import NFLogger
import NFLoggerTesting

/// A logger uploading to `transport`, with `policy` (a policy document) in force and no policy
/// fetches.
func makeLogger(_ transport: RecordingTransport, policy: String? = nil) throws -> NFLogger {
    var configuration = transport.configuration()
    configuration.policyURL = nil
    if let policy { configuration.policyOptions.fallback = try Policy.parse(Data(policy.utf8)) }
    return try NFLogger(configuration: configuration)
}

/// A policy with one of the automatic sources off.
func policy(turningOff source: String) -> String {
    #"{"version":1,"mode":"active","auto":{"\#(source)":false}}"#
}

/// Flushes until `condition` holds for what the transport received (events logged from a
/// completion or a response's end arrive a little later), at most `timeout` seconds (a hang's
/// bound, not a margin: a loaded machine may take many times longer than an idle one).
func flush(_ logger: NFLogger, until condition: () -> Bool, timeout: TimeInterval = 300) async {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        _ = await logger.flush()
        if condition() { return }
        try? await Task.sleep(nanoseconds: 20_000_000)
    } while Date() < deadline
}
