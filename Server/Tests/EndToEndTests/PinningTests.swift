import Foundation
import NFLogCollector
import NFLogCollectorTesting
import NFLogger
import Testing
import NFLogTestSupport

/// HTTPS and certificate pinning, with certificates the test makes and a real collector serving
/// TLS on 127.0.0.1.
@Suite("TLS and certificate pinning")
struct PinningTests {
    /// A collector serving HTTPS with a new self-signed certificate, and that certificate's PEM.
    static func httpsCollector(hosts: [String] = ["127.0.0.1", "localhost"]) async throws -> (TestCollector, String) {
        let certificate = try SelfSignedCertificate(hosts: hosts)
        var configuration = CollectorConfiguration()
        configuration.tls = try CollectorTLS(certificatePEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
        let collector = try await TestCollector.start(configuration: configuration)
        return (collector, certificate.certificatePEM)
    }

    @Test("Pinned to the collector's certificate: uploads and the policy fetch succeed over HTTPS")
    func pinnedCertificateDelivers() async throws {
        let (collector, pem) = try await Self.httpsCollector()
        #expect(collector.url.scheme == "https")
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.network.pinning = try CertificatePinning(pem: pem)
        let logger = try NFLogger(configuration: configuration)
        let receipts = await logEvents(logger, points: 300, spans: 20)
        #expect(await deliverAll(logger).error == nil)
        await logger.close()
        #expect(Set(try await storedIDs(collector)) == receipts)
        await collector.stop()
    }

    @Test("The policy is fetched through the pinned transport too")
    func pinnedPolicyFetch() async throws {
        let policies = TemporaryDirectory()
        try Data(#"{"version": 1, "mode": "disabled"}"#.utf8).write(to: policies.url.appendingPathComponent("default.json"))
        let certificate = try SelfSignedCertificate(hosts: ["127.0.0.1"])
        var collectorConfiguration = CollectorConfiguration()
        collectorConfiguration.tls = try CollectorTLS(certificatePEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
        collectorConfiguration.policiesDirectory = policies.url
        let collector = try await TestCollector.start(configuration: collectorConfiguration)

        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.policyURL = collector.url.appendingPathComponent("v1/policy")
        configuration.network.pinning = try CertificatePinning(pem: certificate.certificatePEM)
        let logger = try NFLogger(configuration: configuration)
        let update = await logger.refreshPolicy()
        #expect(logger.policy?.mode == .disabled, "\(update)")
        await logger.close()
        await collector.stop()
    }

    @Test("Another certificate pinned: uploads fail visibly, nothing is sent, the events stay, retries back off")
    func otherCertificateIsRefused() async throws {
        let (collector, pem) = try await Self.httpsCollector()
        let impostor = try SelfSignedCertificate(hosts: ["127.0.0.1", "localhost"])  // same names, another key
        let scratch = TemporaryDirectory()
        let log = LogCapture()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.network.pinning = try CertificatePinning(pem: impostor.certificatePEM)
        configuration.upload.initialBackoff = 0.5
        configuration.upload.maxBackoff = 4
        configuration.logger = log.logger
        let logger = try NFLogger(configuration: configuration)
        let receipts = await logEvents(logger, points: 50)
        #expect(receipts.count == 50)

        let result = await logger.flush()
        guard case .untrustedCollector(let detail)? = result.error else {
            Issue.record("expected an untrusted-collector error, got \(String(describing: result.error))")
            return
        }
        #expect(detail.contains("127.0.0.1"))
        #expect(result.uploadedEvents == 0 && result.remainingEvents == 50)

        // Automatic retries during 3 seconds: a handful at most (backoff 0.5 s doubling), not a loop.
        let before = await logger.diagnostics().retriedUploads
        try await Task.sleep(for: .seconds(3))
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.retriedUploads - before <= 6, "retries: \(diagnostics.retriedUploads - before)")
        #expect(diagnostics.waitingForUpload == 50)
        if case .untrustedCollector? = diagnostics.lastUploadError {} else {
            Issue.record("diagnostics show \(String(describing: diagnostics.lastUploadError))")
        }
        #expect(log.entries.contains { $0.level == .error && $0.message.contains("certificate") })
        await logger.close()
        #expect(try await collector.stats().eventsStored == 0)

        // The events were kept: pinned to the right certificate, the same database delivers them all.
        configuration.network.pinning = try CertificatePinning(pem: pem)
        let again = try NFLogger(configuration: configuration)
        #expect(await deliverAll(again).error == nil)
        await again.close()
        #expect(Set(try await storedIDs(collector)) == receipts)
        await collector.stop()
    }

    @Test("The pinned certificate, but not for this host: refused (hostnames are still checked)")
    func wrongHostIsRefused() async throws {
        let (collector, pem) = try await Self.httpsCollector(hosts: ["collector.example.com"])
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.network.pinning = try CertificatePinning(pem: pem)
        let logger = try NFLogger(configuration: configuration)
        _ = await logEvents(logger, points: 5)
        let result = await logger.flush()
        if case .untrustedCollector? = result.error {} else { Issue.record("got \(String(describing: result.error))") }
        #expect(result.remainingEvents == 5)
        await logger.close()
        #expect(try await collector.stats().eventsStored == 0)
        await collector.stop()
    }

    @Test("Without pinning, a self-signed collector is refused by the system's trust store")
    func unpinnedSelfSignedIsRefused() async throws {
        let (collector, _) = try await Self.httpsCollector()
        let scratch = TemporaryDirectory()
        let logger = try NFLogger(configuration: configuration(scratch, collector: collector.url))
        _ = await logEvents(logger, points: 5)
        let result = await logger.flush()
        #expect(result.error != nil && result.remainingEvents == 5, "\(result)")
        await logger.close()
        #expect(try await collector.stats().eventsStored == 0)
        await collector.stop()
    }

    @Test("Pinning with an http URL, with a transport of one's own, or from a file with no certificate: clear errors")
    func badPinningConfigurations() throws {
        let scratch = TemporaryDirectory()
        let pem = try SelfSignedCertificate(hosts: ["127.0.0.1"]).certificatePEM
        var configuration = configuration(scratch, collector: URL(string: "http://127.0.0.1:9")!)
        configuration.network.pinning = try CertificatePinning(pem: pem)
        #expect(throws: ConfigurationError.invalidField("upload_url", reason: "must be https when certificates are pinned, got http://127.0.0.1:9/v1/events")) {
            try NFLogger(configuration: configuration)
        }
        configuration.uploadURL = URL(string: "https://127.0.0.1:9/v1/events")
        configuration.network.transport = DefaultHTTPTransport()
        #expect(throws: ConfigurationError.self) { try NFLogger(configuration: configuration) }

        let garbage = scratch.url.appendingPathComponent("not-a-certificate.pem")
        try Data("hello".utf8).write(to: garbage)
        #expect(throws: ConfigurationError.self) { try CertificatePinning(contentsOf: [garbage]) }
        #expect(throws: ConfigurationError.self) { try CertificatePinning(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n") }
        #expect(throws: ConfigurationError.self) { try CertificatePinning(contentsOf: [scratch.url.appendingPathComponent("missing.pem")]) }

        // DER works as well as PEM.
        let derFile = scratch.url.appendingPathComponent("collector.der")
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        try #require(Data(base64Encoded: base64)).write(to: derFile)
        #expect(throws: Never.self) { try CertificatePinning(contentsOf: [derFile]) }
    }
}
