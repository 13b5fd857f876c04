import Foundation
import Testing
import NFLogger
import NFLogTestSupport

@Suite("The README's integration example")
struct ReadmeExampleTests {
    /// Synchronous, like the button handler the README has in mind: in `async` code the same
    /// lines would pick the `async` twins.
    static func readmeExample(databaseURL: URL) throws -> NFLogger {
        let cart = ["sku-1", "sku-2"]
        // README example start
        let configuration = Configuration(databaseURL: databaseURL, appID: "com.example.shop", appVersion: "2.1.0")
        let logger = try NFLogger(configuration: configuration)
        logger.logEvent(name: "ui.tap", parameters: ["button": "checkout", "items": cart.count]) { status in print(status) }
        let request = logger.startEvent(name: "net.request", parameters: ["path": "/cart"])
        request.end(parameters: ["status": 200])
        // README example end
        return logger
    }

    // The check awaits the diagnostics rather than blocking a thread of the test's pool on a
    // semaphore: on a busy 2-core machine a blocked pool thread is half the pool.
    @Test("compiles and does what the README says")
    func example() async throws {
        let directory = TemporaryDirectory()
        let logger = try Self.readmeExample(databaseURL: directory.databaseURL)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.recorded == 3)
        #expect(diagnostics.storedPointEvents == 1 && diagnostics.storedSpanEvents == 1 && diagnostics.openSpans == 0)
        await logger.close()
    }

    @Test("is the code the README shows, line for line")
    func readmeShowsThisCode() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)

        let compiled = Self.lines(of: source, between: "// README example start", and: "// README example end")
        let marker = try #require(readme.range(of: "<!-- compiled by Tests/NFLoggerTests/ReadmeExampleTests.swift -->"))
        let shown = Self.lines(of: String(readme[marker.upperBound...]), between: "```swift", and: "```")
            .filter { $0 != "import NFLogger" }
        #expect(!compiled.isEmpty)
        #expect(shown == compiled)
    }

    static func lines(of text: String, between start: String, and end: String) -> [String] {
        var inside = false
        var result: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !inside {
                if trimmed == start { inside = true }
                continue
            }
            if trimmed == end { break }
            if !trimmed.isEmpty { result.append(trimmed) }
        }
        return result
    }
}
