import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
@testable import NFLogCollector

/// Read access apart from ingest: app keys upload and fetch policies, read tokens read stats,
/// reports, lookups and exports, and neither opens the other's endpoints.
@Suite("Read tokens and app keys, apart")
struct ReadAccessTests {
    static let keyA = "key-of-app-a-0123456789"
    static let keyB = "key-of-app-b-0123456789"
    static let readA = "nfr_read-token-of-app-a"
    static let readB = "nfr_read-token-of-app-b"
    static let readAll = "nfr_read-token-of-every-app"
    static let readAB = "nfr_read-token-of-a-and-b"

    /// A collector with apps a and b, a policy for each, and a token per scope.
    static func start(_ kind: StoreKind = .sqlite) async throws -> RunningCollector {
        let policies = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
        try Data(#"{"version":1,"mode":"active"}"#.utf8).write(to: policies.appendingPathComponent("default.json"))
        var configuration = CollectorConfiguration()
        configuration.keys = AppKeys([keyA: "a", keyB: "b"])
        configuration.readTokens = ReadTokens([readA: .apps(["a"]), readB: .apps(["b"]), readAll: .allApps, readAB: .apps(["a", "b"])])
        configuration.policiesDirectory = policies
        return try await kind.startCollector(configuration: configuration)
    }

    /// Every read endpoint, as (method, path, body).
    static let readEndpoints: [(String, String, [UInt8])] = [
        ("GET", "v1/stats", []), ("GET", "v1/report", []),
        ("POST", "v1/events/lookup", Array(#"{"uuids":["\#(UUID().uuidString)"]}"#.utf8)), ("GET", "v1/export", []),
        ("GET", "v1/report/series", []), ("GET", "v1/report/policy", []),
    ]

    func send(_ collector: some CollectorUnderTest, _ method: String, _ path: String, query: String = "", body: [UInt8] = [],
              headers: [String: String]) async throws -> TransportResponse {
        let url = try #require(URL(string: collector.url.absoluteString + "/" + path + query))
        return try await DefaultHTTPTransport(timeout: hangLimitSeconds).send(TransportRequest(url: url, method: method, headers: headers, body: Data(body)))
    }

    @Test("Every read endpoint refuses no credential, an app key, a malformed or unknown token, and another app's token")
    func readMatrix() async throws {
        let collector = try await Self.start()
        let key = WireProtocol.appKeyHeader
        let refusals: [(label: String, query: String, headers: [String: String], status: Int, says: String)] = [
            ("no credential", "", [:], 401, "missing read token"),
            ("app a's key", "", [key: Self.keyA], 403, "an app key cannot read"),
            ("app a's key, asking for a", "?app=a", [key: Self.keyA], 403, "read token"),
            ("Basic credentials", "", ["Authorization": "Basic YTpi"], 401, "must be Bearer"),
            ("an empty bearer", "", ["Authorization": "Bearer "], 401, "must be Bearer"),
            ("an unknown token", "", ["Authorization": "Bearer nfr_nope"], 401, "unknown read token"),
            ("the read token in the key header", "", [key: Self.readA], 403, "an app key cannot read"),
            ("b's token asking for a", "?app=a", ["Authorization": "Bearer \(Self.readB)"], 403, "does not cover app a"),
            ("a token of two apps, naming none", "", ["Authorization": "Bearer \(Self.readAB)"], 400, "name one with ?app="),
            ("every app's token, naming none", "", ["Authorization": "Bearer \(Self.readAll)"], 400, "name one with ?app="),
        ]
        for (method, path, body) in Self.readEndpoints {
            for refusal in refusals {
                let response = try await send(collector, method, path, query: refusal.query, body: body, headers: refusal.headers)
                let message = CollectorClient.message(response.body)
                #expect(response.status == refusal.status && message.contains(refusal.says),
                        "\(method) \(path), \(refusal.label): \(response.status) \(message)")
                if response.status == 401 { #expect(response.header("WWW-Authenticate") == "Bearer") }
            }
            for (token, query) in [(Self.readA, ""), (Self.readA, "?app=a"), (Self.readAB, "?app=b"), (Self.readAll, "?app=zzz")] {
                let response = try await send(collector, method, path, query: query, body: body, headers: ["Authorization": "Bearer \(token)"])
                #expect(response.status == 200, "\(method) \(path)\(query) with a covering token: \(response.status)")
            }
        }
        await collector.stop()
    }

    @Test("Upload and policy refuse read tokens; keys keep working beside them")
    func writeMatrix() async throws {
        let collector = try await Self.start()
        let batch = try CollectorClient.gzip(BatchFixtures.batch(events: [BatchFixtures.point(UUID().uuidString.lowercased())]))
        let gzip = ["Content-Encoding": "gzip", "Content-Type": "application/json"]
        for (method, path, body, extra) in [("POST", "v1/events", batch, gzip), ("GET", "v1/policy", [UInt8](), [String: String]())] {
            let bearer = try await send(collector, method, path, body: body, headers: extra.merging(["Authorization": "Bearer \(Self.readAll)"]) { $1 })
            #expect(bearer.status == 403 && CollectorClient.message(bearer.body).contains("a read token cannot upload"), "\(path): \(bearer.status)")
            let inKeyHeader = try await send(collector, method, path, body: body, headers: extra.merging([WireProtocol.appKeyHeader: Self.readAll]) { $1 })
            #expect(inKeyHeader.status == 401 && CollectorClient.message(inKeyHeader.body).contains("unknown app key"), "\(path): \(inKeyHeader.status)")
            let key = try await send(collector, method, path, body: body, headers: extra.merging([WireProtocol.appKeyHeader: Self.keyA]) { $1 })
            #expect(key.status == 200, "\(path) with the app key: \(key.status)")
        }
        #expect(try await collector.store.stats(app: "a").eventsStored == 1, "only the key's upload was stored")
        await collector.stop()
    }

    @Test("Export over HTTP: pages in order, the next page named while a page is full, only the token's app", arguments: StoreKind.all)
    func exportPages(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        let ids = (0..<25).map { _ in UUID().uuidString.lowercased() }
        let a = CollectorClient(collector, key: Self.keyA)
        #expect(try await a.post(try CollectorClient.gzip(BatchFixtures.batch(events: ids.map { BatchFixtures.point($0) }))).status == 200)
        #expect(try await CollectorClient(collector, key: Self.keyB).post(
            try CollectorClient.gzip(BatchFixtures.batch(events: [BatchFixtures.point(UUID().uuidString.lowercased())]))).status == 200)

        var after = "0"
        var lines: [String] = []
        var pages = 0
        while true {
            let response = try await send(collector, "GET", "v1/export", query: "?after=\(after)&limit=10", headers: ["Authorization": "Bearer \(Self.readA)"])
            #expect(response.status == 200 && response.header("Content-Type") == "application/x-ndjson")
            let page = String(decoding: response.body, as: UTF8.self).split(separator: "\n").map(String.init)
            lines += page
            pages += 1
            guard let next = response.header(WireProtocol.nextPageHeader) else {
                #expect(page.count < 10)
                break
            }
            #expect(page.count == 10)
            after = next
        }
        #expect(pages == 3 && lines.count == 25)
        let exported = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(exported.map { $0["uuid"] as? String } == ids, "every event of app a, oldest first, once")
        #expect(exported.allSatisfy { $0["app"] as? String == "a" })

        for bad in ["?limit=0", "?limit=10001", "?after=-1", "?after=x"] {
            let response = try await send(collector, "GET", "v1/export", query: bad, headers: ["Authorization": "Bearer \(Self.readA)"])
            #expect(response.status == 400, "\(bad): \(response.status)")
        }
        await collector.stop()
    }

    @Test("keygen's read token: only its SHA-256 is written, it reads its apps, and a broken file is left alone")
    func tokensFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString).json").path
        let one = try AppKeysFile.addReadToken(for: .apps(["shop"]), to: path)
        let every = try AppKeysFile.addReadToken(for: .allApps, to: path)
        #expect(one.hasPrefix("nfr_") && one.utf8.count == 47 && one != every)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains(one) && text.contains(ReadTokens.sha256Hex(of: one)))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let tokens = try ReadTokens(contentsOf: URL(fileURLWithPath: path))
        #expect(tokens.scope(forToken: one) == .apps(["shop"]) && tokens.scope(forToken: every) == .allApps)
        #expect(tokens.scope(forToken: ReadTokens.sha256Hex(of: one)) == nil, "the hash is not a token")

        for (broken, says) in [
            (#"{"tokens":[{"apps":["x"],"token_sha256":"abc"}]}"#, "tokens[0] must be an object"),
            (#"{"tokens":[{"apps":[],"token_sha256":"\#(ReadTokens.sha256Hex(of: "t"))"}]}"#, "tokens[0].apps"),
            (#"{"tokens":[{"apps":"x","token_sha256":"\#(ReadTokens.sha256Hex(of: "t"))"}]}"#, "tokens[0].apps"),
            (#"{"tokens":[{"apps":"*","token_sha256":"\#(ReadTokens.sha256Hex(of: "dev-read-token"))"}]}"#, "public development token"),
            (#"{"tokens":[{"apps":"*","token_sha256":"\#(ReadTokens.sha256Hex(of: "t"))"},{"apps":"*","token_sha256":"\#(ReadTokens.sha256Hex(of: "t"))"}]}"#, "listed twice"),
            (#"{"keys":[]}"#, "\"tokens\" array"),
        ] {
            try Data(broken.utf8).write(to: URL(fileURLWithPath: path))
            #expect { try ReadTokens(contentsOf: URL(fileURLWithPath: path)) } throws: { ($0 as? AppKeysError)?.reason.contains(says) == true }
            #expect(throws: AppKeysError.self) { try AppKeysFile.addReadToken(for: .allApps, to: path) }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == broken, "a file serve would refuse is never extended")
        }
    }

    @Test("The development read token reads app dev only, and keeps the collector on loopback")
    func developmentToken() async throws {
        let collector = try await TestCollector.start()
        let reader = CollectorClient.reader(collector)
        #expect(try await reader.json("GET", "v1/stats")["app"] as? String == TestCollector.app)
        let other = try await send(collector, "GET", "v1/stats", query: "?app=other", headers: ["Authorization": "Bearer \(TestCollector.readToken)"])
        #expect(other.status == 403)
        await collector.stop()

        var configuration = CollectorConfiguration()
        configuration.keys = AppKeys([Self.keyA: "a"])
        configuration.host = "0.0.0.0"
        let store = try SQLiteEventStore(path: FileManager.default.temporaryDirectory.appendingPathComponent("dev-\(UUID().uuidString).sqlite").path, durableCommits: false)
        #expect { try CollectorServer(configuration: configuration, store: store) } throws: { error in
            guard case .developmentReadTokenNeedsLoopback? = error as? CollectorError else { return false }
            return true
        }
        configuration.readTokens = .none
        #expect(throws: Never.self) { try CollectorServer(configuration: configuration, store: store) }
        await store.close()
    }
}
