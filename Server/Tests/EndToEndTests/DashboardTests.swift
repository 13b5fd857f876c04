import CollectorTestSupport
import Foundation
import NFLogger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The package's executables, built beside the test bundle.
enum Executables {
    static func url(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// The server package's root, Server/ (Tests/Browser/, .build/).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The repository: the SDK's package, one folder above Server/.
    static let repositoryRoot = packageRoot.deletingLastPathComponent()

    /// Starts `name` with `arguments`, its standard output in a pipe, its errors discarded.
    static func start(_ name: String, _ arguments: [String]) throws -> (process: ChildProcess, output: Pipe) {
        try Child.start(arguments, executable: url(name))
    }

    /// Runs `name` to its end off Swift's pool: its exit status and standard output.
    static func run(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let path = url(name).path
        return try await Child.offPool { Result { try Child.runProcess(path, arguments) } }.get()
    }

    /// Lines from `pipe` until one starts with `prefix` (that line), or "" at the end of output.
    static func line(startingWith prefix: String, in pipe: Pipe) async -> String {
        await Child.offPool { () -> String in
            var line: [UInt8] = []
            while let bytes = try? pipe.fileHandleForReading.read(upToCount: 1), let byte = bytes.first {
                guard byte == 10 else { line.append(byte); continue }
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix(prefix) { return text }
                line.removeAll()
            }
            return ""
        }
    }

    /// Waits up to `seconds` for `process` to end; whether it did.
    static func waitForExit(_ process: ChildProcess, seconds: Double) async -> Bool {
        await Child.offPool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            return !process.isRunning
        }
    }
}

@Suite("The dashboard", .serialized)
struct DashboardTests {
    @Test("Headless Chromium over a collector filled by the seeded demo: a wrong token is refused clearly; the first view is the app's data (first to last event, every event, more than one bar); every number shown is the report's, each chart has one mark per value, no console errors, nothing wider than a phone; an app without events shows no data", .enabled(if: Browser.available, "needs chromium, chromium-driver and python3's selenium"))
    func inTheBrowser() async throws {
        let scratch = TemporaryDirectory()
        let tokens = scratch.url.appendingPathComponent("tokens.json").path
        // A token for the demo's app and for one that never uploads.
        let keygen = try await Executables.run("nflog-collector", ["keygen", "--read-token", "dev,empty", "--read-tokens", tokens])
        #expect(keygen.status == 0)
        let token = keygen.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("nfr_"))

        let serve = try Executables.start("nflog-collector", [
            "serve", "--port", "0", "--db", scratch.url.appendingPathComponent("collector.sqlite").path, "--read-tokens", tokens,
            "--policies", Executables.repositoryRoot.appendingPathComponent("Policies").path])
        defer { if serve.process.isRunning { serve.process.terminate() } }
        let first = await Child.firstLine(of: serve.output)
        let url = try #require(first.hasPrefix("listening on ") ? String(first.dropFirst("listening on ".count)) : nil, "the collector said \(first)")

        let demo = try await Executables.run("nflog-demo", ["--collector", url, "--read-token", token, "--read-app", "dev", "--sessions", "3", "--events", "600"])
        #expect(demo.status == 0, "\(demo.output)")
        #expect(demo.output.contains("Dashboard: \(url)/dashboard"))
        // A second run at least a second later: the app's data then spans two seconds at least,
        // however fast the machine logs, so the first view (per second) has more than one bar.
        try await Task.sleep(for: .seconds(1))
        let again = try await Executables.run("nflog-demo", ["--collector", url, "--read-token", token, "--read-app", "dev", "--sessions", "3", "--events", "600"])
        #expect(again.status == 0, "\(again.output)")

        let shots = Executables.packageRoot.appendingPathComponent(".build/dashboard-screenshots")
        let driver = Executables.packageRoot.appendingPathComponent("Tests/Browser/dashboard.py").path
        let run = await Child.offPool { try? Child.runProcess("/usr/bin/env", ["python3", driver, "check", url, token, shots.path, "empty"]) }
        let output = try #require(run).output
        let last = output.split(separator: "\n").last.map(String.init) ?? ""
        let page = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "dashboard.py printed: \(output)")
        #expect(page["failures"] as? [String] == [], "\(page["failures"] ?? "no failures key")")
        #expect((page["wrong_token_message"] as? String)?.contains("not accepted") == true)
        #expect(page["console_errors"] as? [String] == [])
        #expect((page["values_checked"] as? Int ?? 0) >= 50, "\(page)")
        let view = try #require(page["default_view"] as? [String: Any], "\(page)")
        #expect(view["range"] as? String == "data" && (view["bars"] as? Int ?? 0) > 1, "\(view)")
        #expect((view["events_in_view"] as? Int).map { $0 > 0 && $0 == view["events_kept"] as? Int } == true, "\(view)")
        let marks = try #require(page["marks"] as? [String: Int])
        #expect(marks["svg[data-chart=events] .mark"] ?? 0 > 0 && marks["svg[data-chart=network] [data-series=p50] .mark"] ?? 0 > 0, "\(marks)")
        for name in ["desktop.png", "phone.png", "empty.png"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: shots.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            #expect(size > 10_000, "\(name): \(size) bytes")
        }
        serve.process.terminate()
        #expect(await Executables.waitForExit(serve.process, seconds: 30))
    }

    @Test("nflog-demo --keep-running prints the dashboard's URL and a read token, stays up serving it, and exits cleanly on SIGTERM")
    func demoKeepsRunning() async throws {
        let demo = try Executables.start("nflog-demo", ["--keep-running", "--sessions", "1", "--events", "100"])
        defer { if demo.process.isRunning { demo.process.terminate() } }
        let line = await Executables.line(startingWith: "Dashboard: ", in: demo.output)
        // "Dashboard: http://127.0.0.1:PORT/dashboard · read token nfr_…"
        let parts = line.split(separator: " ")
        let page = try #require(parts.count >= 5 ? URL(string: String(parts[1])) : nil, "the demo printed: \(line)")
        let token = String(parts[parts.count - 1])
        #expect(line.contains(" · read token nfr_") && !line.contains("stopped"), "\(line)")

        let transport = DefaultHTTPTransport(timeout: hangLimitSeconds)
        let html = try await transport.send(TransportRequest(url: page, method: "GET", headers: [:], body: Data()))
        #expect(html.status == 200 && html.header("Content-Type") == "text/html; charset=utf-8")
        let apps = try await transport.send(TransportRequest(url: page.deletingLastPathComponent().appendingPathComponent("v1/apps"), method: "GET",
                                                             headers: ["Authorization": "Bearer \(token)"], body: Data()))
        #expect(apps.status == 200 && String(decoding: apps.body, as: UTF8.self) == #"{"apps":["dev"]}"#)
        let report = try await transport.send(TransportRequest(url: page.deletingLastPathComponent().appendingPathComponent("v1/report"), method: "GET",
                                                               headers: ["Authorization": "Bearer \(token)"], body: Data()))
        #expect(report.status == 200)
        try await Task.sleep(for: .milliseconds(500))
        #expect(demo.process.isRunning, "the demo ended instead of keeping the collector up")

        kill(demo.process.processIdentifier, SIGTERM)
        #expect(await Executables.waitForExit(demo.process, seconds: 30), "still running 30 s after SIGTERM")
        #expect(demo.process.terminationReason == .exit && demo.process.terminationStatus == 0)
        let after = try? await transport.send(TransportRequest(url: page, method: "GET", headers: [:], body: Data()))
        #expect(after == nil || after?.status != 200, "the collector still answers after the demo ended")
        transport.shutdown()
    }
}
