import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
@testable import NFLogCollector

/// `GET /v1/apps` and the dashboard's files over real HTTP (the page itself is driven in a real
/// browser by EndToEndTests' DashboardBrowserTests).
@Suite("The dashboard's routes and /v1/apps")
struct DashboardRouteTests {
    static let readAB = "nfr_read-token-of-b-and-a"
    static let readAll = "nfr_read-token-of-every-app"

    static func start() async throws -> TestCollector {
        var configuration = CollectorConfiguration()
        configuration.keys = AppKeys([ReadAccessTests.keyA: "a", ReadAccessTests.keyB: "b", "key-of-app-c-0123456789": "c"])
        // "b" twice: a hand-edited file may list an app twice; the answer lists it once.
        configuration.readTokens = ReadTokens([readAB: .apps(["b", "zeta", "a", "b"]), readAll: .allApps])
        return try await TestCollector.start(configuration: configuration)
    }

    @Test("GET /v1/apps: the apps a token names, sorted, once each (stored or not); every stored app for a token of every app; 401 and 403 as for every read")
    func apps() async throws {
        let collector = try await Self.start()
        for (key, app) in [(ReadAccessTests.keyB, "b"), ("key-of-app-c-0123456789", "c")] {
            let batch = try CollectorClient.gzip(BatchFixtures.batch(events: [BatchFixtures.point(UUID().uuidString.lowercased())]))
            #expect(try await CollectorClient(collector, key: key).post(batch).status == 200, "upload for \(app)")
        }
        let named = try await CollectorClient.reader(collector, token: Self.readAB).json("GET", "v1/apps")
        #expect(named["apps"] as? [String] == ["a", "b", "zeta"], "\(named)")
        let every = try await CollectorClient.reader(collector, token: Self.readAll).json("GET", "v1/apps")
        #expect(every["apps"] as? [String] == ["b", "c"], "\(every)")
        #expect(Set(every.keys) == ["apps"])

        let unknown = try await CollectorClient.reader(collector, token: "nfr_nope").send("GET", "v1/apps")
        #expect(unknown.status == 401 && CollectorClient.message(unknown.body) == "unknown read token")
        #expect(unknown.header("WWW-Authenticate") == "Bearer")
        let key = try await CollectorClient(collector, key: ReadAccessTests.keyA).send("GET", "v1/apps")
        #expect(key.status == 403 && CollectorClient.message(key.body).contains("an app key cannot read"))
        await collector.stop()
    }

    @Test("GET /dashboard: the page with no credential, its script and style, a CSP that keeps it on this collector, ETags, 404 for anything else")
    func files() async throws {
        let collector = try await Self.start()
        let client = CollectorClient(collector, key: nil)
        let page = try await client.send("GET", "dashboard")
        #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains(#"<script src="/dashboard/dashboard.js" defer></script>"#) && html.contains(#"href="/dashboard/dashboard.css""#))
        let policy = try #require(page.header("Content-Security-Policy"))
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'") && policy.contains("script-src 'self'"))
        #expect(page.header("X-Content-Type-Options") == "nosniff" && page.header("Cache-Control") == "no-cache")

        for (name, type) in DashboardFiles.served {
            let response = try await client.send("GET", "dashboard/\(name)")
            #expect(response.status == 200 && response.header("Content-Type") == type, "\(name): \(response.status)")
            #expect(!response.body.isEmpty)
            let etag = try #require(response.header("ETag"))
            let again = try await client.send("GET", "dashboard/\(name)", headers: ["If-None-Match": etag])
            #expect(again.status == 304 && again.body.isEmpty, "\(name) again: \(again.status)")
        }
        // Every script and style the page names is one the collector serves, and no other host.
        for reference in ["charts.js", "dashboard.js", "dashboard.css"] {
            #expect(html.contains("/dashboard/\(reference)"))
        }
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("//cdn"))

        for path in ["dashboard/nope.js", "dashboard/..%2FPackage.swift", "dashboard/index.html/x"] {
            let response = try await client.send("GET", path)
            #expect(response.status == 404, "\(path): \(response.status)")
            #expect(response.header("Content-Type") == "application/json")
        }
        await collector.stop()
    }

    @Test("Dashboard files missing from beside the executable: a failure that says what to copy (the route answers 404 with it); the build's own files load")
    func missingFiles() async throws {
        let missing = DashboardFiles.load(from: URL(fileURLWithPath: "/nonexistent/\(DashboardFiles.bundleName)"))
        guard case .failure(let error) = missing else {
            Issue.record("files loaded from a folder that does not exist")
            return
        }
        #expect("\(error)".contains("copy the folder \(DashboardFiles.bundleName)"))
        #expect(try DashboardFiles.shared.get().file(named: "index.html") != nil, "the build's own files load")
        #expect(try DashboardFiles.shared.get().file(named: "../Package.swift") == nil)
    }
}
