import Foundation
import Logging
import NFLogCollector
import NFLogCollectorTesting
import NFLogger
import Testing
import NFLogTestSupport
@_spi(NFLogShared) import NFLogSupport

/// The SDK's own log (swift-log): quiet by default, and at every level it never carries
/// parameters, app keys or encryption keys.
@Suite("The SDK's own logging")
struct LoggingTests {
    static let marker = "MARKER-LOG-5c1d-home-address"
    static let appKey = "k-SECRET-app-key-4b7e91"
    static let wrongKey = "k-SECRET-wrong-key-0a3f"

    @Test("By default the logger is silent")
    func silentByDefault() {
        let configuration = Configuration(databaseURL: URL(fileURLWithPath: "/tmp/x.sqlite"), appID: "a", appVersion: "1")
        #expect(configuration.logger.handler is SwiftLogNoOpLogHandler)
    }

    @Test("At trace level, through uploads, a policy, a refused event, a refused key and a database moved aside: no parameter, key or token in any line")
    func nothingSecretIsLogged() async throws {
        let policies = TemporaryDirectory()
        try Data(#"{"version": 1, "mode": "active", "rules": {"deny": ["debug.**"]}}"#.utf8)
            .write(to: policies.url.appendingPathComponent("default.json"))
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.keys = AppKeys([Self.appKey: "com.example.e2e"])
        collectorConfiguration.policiesDirectory = policies.url
        collectorConfiguration.json.maxStringBytes = 4_096  // so one event below is refused
        let collector = try await TestCollector.start(configuration: collectorConfiguration)

        let scratch = TemporaryDirectory()
        let log = LogCapture()
        let encryptionKey = EncryptionKey.generate()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.appKey = Self.appKey
        configuration.policyURL = collector.url.appendingPathComponent("v1/policy")
        configuration.encryptionKey = encryptionKey
        configuration.logger = log.logger
        let logger = try NFLogger(configuration: configuration)
        _ = await logger.refreshPolicy()
        for index in 0..<20 {
            #expect(await logger.logEvent(name: "form.submit", parameters: ["address": Self.marker, "index": index]).isRecorded)
            let (span, _) = await logger.startEvent(name: "screen.view", parameters: ["note": Self.marker])
            #expect(await span.end(parameters: ["result": Self.marker]).isRecorded)
        }
        let denied = await logger.logEvent(name: "debug.trace", parameters: ["address": Self.marker])
        if case .filtered = denied {} else { Issue.record("debug.** is denied by the policy, got \(denied)") }
        #expect(await deliverAll(logger).error == nil)
        // One event the collector refuses (a string over its limit), marker and all.
        _ = await logger.logEvent(name: "form.notes", parameters: ["text": String(repeating: Self.marker, count: 200)])
        _ = await logger.flush()
        await logger.close()

        // A second app with a key the collector does not know.
        var wrong = configuration
        wrong.databaseURL = scratch.url.appendingPathComponent("wrong.sqlite")
        wrong.appKey = Self.wrongKey
        let refused = try NFLogger(configuration: wrong)
        _ = await refused.logEvent(name: "form.submit", parameters: ["address": Self.marker])
        let result = await refused.flush()
        if case .refused(status: 401, _)? = result.error {} else { Issue.record("expected a 401, got \(String(describing: result.error))") }
        await refused.close()

        // The first database, opened with another key: moved aside, said at error level.
        var rekeyed = configuration
        rekeyed.encryptionKey = EncryptionKey.generate()
        let moved = try NFLogger(configuration: rekeyed)
        #expect(await moved.logEvent(name: "form.submit", parameters: ["address": Self.marker]).isRecorded)
        #expect(await moved.diagnostics().databaseResets.count == 1)
        await moved.close()
        await collector.stop()

        let entries = log.entries
        let levels = Set(entries.map(\.level))
        #expect(levels.isSuperset(of: [.trace, .debug, .error]), "levels seen: \(levels)")
        for secret in [Self.marker, Self.appKey, Self.wrongKey, encryptionKey.base64, String(encryptionKey.base64.prefix(12))] {
            let leaks = entries.filter { $0.line.contains(secret) }
            #expect(leaks.isEmpty, "\(secret) appears in: \(leaks.map(\.line))")
        }
    }
}
