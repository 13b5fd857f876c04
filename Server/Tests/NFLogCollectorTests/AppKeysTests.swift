import Foundation
import NFLogCollectorTesting
import Testing
@testable import NFLogCollector

@Suite("App keys, stored as SHA-256")
struct AppKeysTests {
    func temporaryFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).json").path
    }

    func keys(_ text: String) throws -> AppKeys {
        let path = temporaryFile()
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try AppKeys(contentsOf: URL(fileURLWithPath: path))
    }

    @Test("sha256Hex is the SHA-256 of the key's UTF-8 bytes, in lowercase hex")
    func knownVector() {
        #expect(AppKeys.sha256Hex(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("A file of key_sha256 entries accepts exactly those keys, either hex case")
    func hashedEntries() throws {
        let upper = AppKeys.sha256Hex(of: "k-second-key-456").uppercased()
        let keys = try keys(#"{"keys":[{"app":"shop","key_sha256":"\#(AppKeys.sha256Hex(of: "k-first-key-123"))"},{"app":"news","key_sha256":"\#(upper)"}]}"#)
        #expect(keys.app(forKey: "k-first-key-123") == "shop" && keys.app(forKey: "k-second-key-456") == "news")
        #expect(keys.app(forKey: "k-first-key-12") == nil && keys.app(forKey: "dev-key") == nil && keys.app(forKey: "") == nil)
        #expect(keys.app(forKey: AppKeys.sha256Hex(of: "k-first-key-123")) == nil, "the hash is not a key")
        #expect(keys.plaintextEntries.isEmpty && keys.count == 2 && !keys.isDevelopment)
    }

    @Test("A legacy plaintext entry is accepted, hashed, and listed with the line to write instead")
    func legacyEntry() throws {
        let keys = try keys(#"{"keys":[{"app":"shop","key_sha256":"\#(AppKeys.sha256Hex(of: "k-hashed-0001"))"},{"app":"old","key":"k-plain-0002"}]}"#)
        #expect(keys.app(forKey: "k-plain-0002") == "old" && keys.app(forKey: "k-hashed-0001") == "shop")
        #expect(keys.plaintextEntries == [AppKeys.PlaintextEntry(index: 1, app: "old", keySHA256: AppKeys.sha256Hex(of: "k-plain-0002"))])
    }

    @Test("Each mistake in a keys file is named", arguments: [
        (#"{"keys":[{"app":"x","key":"k-0123456789","key_sha256":"\#(AppKeys.sha256Hex(of: "k-0123456789"))"}]}"#, "has both"),
        (#"{"keys":[{"app":"x","key_sha256":"abc"}]}"#, "keys[0].key_sha256 must be 64 hex digits"),
        (#"{"keys":[{"app":"x","key_sha256":"\#(String(repeating: "g", count: 64))"}]}"#, "64 hex digits"),
        (#"{"keys":[{"app":"x","key_sha256":12}]}"#, "keys[0] must have a string field"),
        (#"{"keys":[{"app":"x","key_sha256":"\#(AppKeys.sha256Hex(of: "dev-key"))"}]}"#, "public development key"),
        (#"{"keys":[{"app":"x","key":"k-0123456789"},{"app":"y","key_sha256":"\#(AppKeys.sha256Hex(of: "k-0123456789"))"}]}"#, "keys[1]: the same key is listed twice"),
        (#"{"keys":[{"app":"","key_sha256":"\#(AppKeys.sha256Hex(of: "k-0123456789"))"}]}"#, "keys[0].app must be 1…256 bytes"),
    ])
    func mistakes(text: String, says: String) {
        #expect {
            try keys(text)
        } throws: { error in
            (error as? AppKeysError)?.reason.contains(says) == true
        }
    }

    @Test("Among 300 keys, each finds its own app and no other key does")
    func manyKeys() {
        var map: [String: String] = [:]
        for index in 0..<300 { map["k-\(index)-\(UUID().uuidString)"] = "app\(index)" }
        let keys = AppKeys(map)
        for (key, app) in map { #expect(keys.app(forKey: key) == app) }
        #expect(keys.app(forKey: "k-300-unknown") == nil)
        #expect(Set(map.keys.compactMap { keys.index(forKey: $0) }).count == 300)
    }

    @Test("The development keys accept dev-key only")
    func development() {
        #expect(AppKeys.development.app(forKey: TestCollector.appKey) == TestCollector.app)
        #expect(AppKeys.development.app(forKey: "dev-key ") == nil && AppKeys.development.isDevelopment)
    }

    @Test("keygen's file: each added key uploads, the file holds only hashes and is owner-only")
    func keygenFile() async throws {
        let path = temporaryFile()
        let shop = try AppKeysFile.addKey(for: "shop", to: path)
        let news = try AppKeysFile.addKey(for: "news", to: path)
        #expect(shop != news && shop.hasPrefix("nfk_") && shop.count == 47)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains(shop) && !text.contains(news) && !text.contains(String(shop.dropFirst(4))))
        #expect(text.contains(AppKeys.sha256Hex(of: shop)) && !text.contains(#""key""#))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let keys = try AppKeys(contentsOf: URL(fileURLWithPath: path))
        #expect(keys.app(forKey: shop) == "shop" && keys.app(forKey: news) == "news" && keys.plaintextEntries.isEmpty)

        // Through a real collector: the printed key uploads; the file's content does not.
        var configuration = CollectorConfiguration()
        configuration.keys = keys
        let collector = try await TestCollector.start(configuration: configuration)
        let batch = try CollectorClient.gzip(BatchFixtures.batch(events: [BatchFixtures.point()]))
        #expect(try await CollectorClient(collector, key: shop).post(batch).status == 200)
        #expect(try await CollectorClient(collector, key: AppKeys.sha256Hex(of: shop)).post(batch).status == 401)
        await collector.stop()
    }

    @Test("keygen leaves a keys file it cannot read as it is")
    func keygenRefusesBadFile() throws {
        let path = temporaryFile()
        try Data(#"{"keys":[{"app":"x"}]}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: AppKeysError.self) { try AppKeysFile.addKey(for: "shop", to: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == #"{"keys":[{"app":"x"}]}"#)
        #expect(throws: AppKeysError.self) { try AppKeysFile.addKey(for: "", to: temporaryFile()) }
    }
}
