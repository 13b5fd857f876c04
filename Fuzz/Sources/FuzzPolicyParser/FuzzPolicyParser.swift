import Foundation
import NFLogger

/// A fixed clock, so that a run is reproducible (`expires_at` is compared with it).
private let now = Date(timeIntervalSince1970: 1_750_000_000)
private let names = ["ui.tap", "app.launch", "net.request.done", "a", "perf.frame.drop", "debug.x-y_z.0"]

/// The SDK's view of a downloaded policy: `Policy.parse`, then the parsed rules and zones used
/// the way the SDK uses them for every event.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicyParser(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = Data(UnsafeRawBufferPointer(start: start, count: count))
    let policy: Policy
    do {
        policy = try Policy.parse(data, now: now)
    } catch {
        // The SDK logs this text and shows it in its diagnostics.
        _ = error.description
        return 0
    }

    for name in names {
        _ = policy.rules.selects(name)
        _ = policy.rules.denies(name)
        let rate = policy.rules.samplingRate(for: name)
        guard (0...1).contains(rate) else { fatalError("sampling rate \(rate) for \(name)") }
        for rule in policy.priorities where rule.pattern.matches(name) {
            guard (-1_000...1_000).contains(rule.priority) else { fatalError("priority \(rule.priority)") }
        }
    }
    for zone in policy.privacyZones {
        guard zone.contains(latitude: zone.latitude, longitude: zone.longitude) else {
            fatalError("a privacy zone does not contain its own centre: \(zone)")
        }
        _ = zone.contains(latitude: -zone.latitude, longitude: 180 - zone.longitude)
    }
    // Parsing is a function of the document and the clock.
    guard (try? Policy.parse(data, now: now)) == policy else { fatalError("a second parse gave another policy") }
    return 0
}
