import Crypto
import Foundation
import Logging
import NFLoggerTesting
import NFLogTestSupport
import Synchronization
import Testing
@testable import NFLogger

/// The PolicyManager's rules, reached directly: what it applies, caches and refuses, with the
/// testing product's RecordingTransport serving the policy (no facade, no network).
@Suite("PolicyManager: apply, cache, not modified, refuse and keep the last good policy")
struct PolicyManagerTests {
    static let url = URL(string: "https://collector.invalid/v1/policy")!
    static let good = Data(#"{"version": 1, "mode": "active", "rules": {"deny": ["debug.**"]}}"#.utf8)
    static let other = Data(#"{"version": 1, "mode": "disabled"}"#.utf8)

    /// What the manager handed the facade, in order.
    final class Applied: Sendable {
        let policies = Mutex<[Policy?]>([])
        var apply: @Sendable (Policy?) -> Void { { policy in self.policies.withLock { $0.append(policy) } } }
        var count: Int { policies.withLock { $0.count } }
        var last: Policy?? { policies.withLock { $0.last } }
    }

    func manager(_ directory: TemporaryDirectory, _ transport: RecordingTransport, _ applied: Applied,
                 verifier: PolicyVerifier? = nil) -> PolicyManager {
        PolicyManager(url: Self.url, appKey: "key", transport: transport, verifier: verifier,
                      cache: PolicyCache(forDatabase: directory.databaseURL), defaultRefresh: 3_600,
                      logger: Logger(label: "test"), completionQueue: DispatchQueue(label: "completions"),
                      initial: nil, fallbackSource: .none, apply: applied.apply)
    }

    /// The policy the next process would start with, from the cache this one wrote.
    func cached(_ directory: TemporaryDirectory) -> Policy? {
        PolicyManager.loadCached(PolicyCache(forDatabase: directory.databaseURL), verifier: nil, logger: Logger(label: "test"))?.policy
    }

    func refresh(_ manager: PolicyManager) async -> PolicyUpdate {
        await withCheckedContinuation { done in manager.refresh { done.resume(returning: $0) } }
    }

    @Test("A served policy is applied, cached for the next start, and a second check with its ETag changes nothing")
    func appliesCachesAndKeeps() async throws {
        let directory = TemporaryDirectory()
        let transport = RecordingTransport()
        let applied = Applied()
        let manager = manager(directory, transport, applied)
        #expect(await refresh(manager) == .notServed)  // nothing served yet: 404
        #expect(applied.count == 0)
        transport.servePolicy(Self.good)
        #expect(await refresh(manager) == .applied)
        #expect(applied.last??.rules.description == "deny [debug.**]")
        #expect(manager.currentStatus.source == .collector && manager.currentStatus.etag != nil)
        // The cache gives the same policy to the next process, before the network answers.
        #expect(cached(directory) == (try Policy.parse(Self.good)))
        #expect(await refresh(manager) == .unchanged)
        #expect(applied.count == 1 && transport.policyRequests == 3)
        manager.close()
    }

    @Test("A refused document leaves the last good policy in force and says why; a good one after it applies")
    func refusedKeepsLastGood() async throws {
        let directory = TemporaryDirectory()
        let transport = RecordingTransport()
        let applied = Applied()
        let manager = manager(directory, transport, applied)
        transport.servePolicy(Self.good)
        #expect(await refresh(manager) == .applied)
        transport.servePolicy(Data(#"{"version": 1, "mode": "sometimes"}"#.utf8))
        #expect(await refresh(manager) == .rejected(.unknownMode("sometimes")))
        #expect(applied.count == 1)  // nothing new handed to the facade
        #expect(manager.currentStatus.lastError == .unknownMode("sometimes"))
        #expect(cached(directory) == (try Policy.parse(Self.good)))
        transport.servePolicy(Self.other)
        #expect(await refresh(manager) == .applied)
        #expect(applied.last??.mode == .disabled)
        #expect(manager.currentStatus.lastError == nil)
        manager.close()
    }

    @Test("With a signing key, an unsigned or badly signed policy is refused; a signed one applies")
    func signatures() async throws {
        let directory = TemporaryDirectory()
        let transport = RecordingTransport()
        let applied = Applied()
        let key = Curve25519.Signing.PrivateKey()
        let manager = manager(directory, transport, applied, verifier: PolicyVerifier(publicKey: key.publicKey.rawRepresentation))
        transport.servePolicy(Self.good)
        #expect(await refresh(manager) == .rejected(.unsigned))
        transport.servePolicy(Self.good, signature: try key.signature(for: Self.other).base64EncodedString())
        #expect(await refresh(manager) == .rejected(.badSignature))
        transport.servePolicy(Self.good, signature: try key.signature(for: Self.good).base64EncodedString())
        #expect(await refresh(manager) == .applied)
        #expect(applied.count == 1)
        manager.close()
    }

    @Test("After close, a check fails as closed and nothing is applied")
    func closed() async {
        let directory = TemporaryDirectory()
        let transport = RecordingTransport()
        let applied = Applied()
        let manager = manager(directory, transport, applied)
        transport.servePolicy(Self.good)
        manager.close()
        #expect(await refresh(manager) == .failed(.closed))
        #expect(applied.count == 0)
    }
}
