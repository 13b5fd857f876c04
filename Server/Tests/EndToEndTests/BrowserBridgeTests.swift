import CollectorTestSupport
import Foundation
import Hummingbird
import Logging
import NFLogCollectorTesting
import NFLogger
import ServiceLifecycle
import Testing

/// A test host for web content: it serves a page (with `nflogger.js` from the package, as an app
/// injects it) and relays the page's channel to a `ScriptBridge` over `POST /bridge`, telling
/// the bridge its own origin, as a web view's adaptor tells it the posting frame's.
final class PageHost: Sendable {
    private let server: LoopbackServer
    var url: URL { server.url }

    private init(server: LoopbackServer) {
        self.server = server
    }

    static func start(bridge: ScriptBridge, pages: [String: String], port: Int = 0) async throws -> PageHost {
        let router = Router()
        let origin = Mutex<String>("")
        let script = try ScriptBridge.script
        router.get("nflogger.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript"], body: .init(byteBuffer: ByteBuffer(string: script)))
        }
        for (path, html) in pages {
            router.get(RouterPath(path)) { _, _ in
                Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: html)))
            }
        }
        router.post("bridge") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let reply = await bridge.handle(message: Data(buffer: body), origin: origin.withLock { $0 })
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: reply)))
        }
        let server = try await LoopbackServer.start(router, port: port, label: "page-host")
        origin.withLock { $0 = server.url.absoluteString }
        return PageHost(server: server)
    }

    func stop() async {
        await server.stop()
    }
}

import Synchronization

enum Browser {
    static let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        && (try? Child.runProcess("/usr/bin/env", ["python3", "-c", "import selenium"]).status) == 0

    /// The page's channel: `POST /bridge` on its own host.
    static let channel = """
        <script>
        window.__nfloggerChannel = function (message) {
          return fetch("/bridge", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(message) })
            .then(function (response) { return response.json(); });
        };
        </script>
        <script src="/nflogger.js"></script>
        """
}

extension Child {
    static func runProcess(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

@Suite("nflogger.js in a real browser (headless Chromium)", .enabled(if: Browser.available, "needs chromium, chromium-driver and python3's selenium"))
struct BrowserBridgeTests {
    @Test("A page's flow (a span, taps, one invalid call) and a disallowed iframe: the promises say what happened, and exactly the allowed, valid events reach a real collector once, in the app's session")
    func pageFlow() async throws {
        let collector = try await TestCollector.start()
        let scratch = TemporaryDirectory()
        // The iframe's host: another origin, which the app does not allow.
        let frameLogger = try NFLogger(configuration: configuration(TemporaryDirectory(), collector: collector.url))
        let frameHost = try await PageHost.start(bridge: ScriptBridge(logger: frameLogger), pages: ["frame.html": """
            <!doctype html><html><body>\(Browser.channel)
            <script>
            NFLogger.logEvent("ads.impression", {slot: 1}).then(function (reply) { parent.postMessage(reply, "*"); });
            </script></body></html>
            """])
        let pageHTML = """
            <!doctype html><html><head><title>Help</title></head><body>
            <h1>Help: refunds</h1><button id="tap">Was this helpful?</button>
            <iframe id="ad" src="\(frameHost.url.absoluteString)/frame.html" width="300" height="60"></iframe>
            \(Browser.channel)
            <script>
            window.__results = {};
            var fromFrame = new Promise(function (resolve) { window.addEventListener("message", function (e) { resolve(e.data); }); });
            (async function () {
              var r = window.__results;
              r.view = await NFLogger.logEvent("help.view", {topic: "refunds"});
              var read = await NFLogger.startEvent("help.read", {topic: "refunds"});
              r.readStart = read.status;
              for (var i = 0; i < 3; i++) {
                document.getElementById("tap").click();
                r["tap" + i] = await NFLogger.logEvent("help.tap", {i: i});
              }
              r.invalid = await NFLogger.logEvent("bad name", {});
              r.readEnd = await read.end({scrolled: 0.5});
              r.frame = await fromFrame;
              window.__done = true;
            })();
            </script></body></html>
            """
        // The page's host needs its own origin in the logger's allowed origins before the page
        // loads: start it once to learn a port, then build the logger and its bridge for that origin.
        let probe = try await PageHost.start(bridge: ScriptBridge(logger: frameLogger), pages: [:])
        let port = probe.url.port ?? 0
        await probe.stop()
        var appConfiguration = configuration(scratch, collector: collector.url)
        appConfiguration.webBridge.allowedOrigins = ["http://127.0.0.1:\(port)"]
        let logger = try NFLogger(configuration: appConfiguration)
        let pageHost = try await PageHost.start(bridge: ScriptBridge(logger: logger), pages: ["help.html": pageHTML], port: port)

        let shots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/browser")
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/drive.py").path
        let run = await Child.offPool {
            try? Child.runProcess("/usr/bin/env", ["python3", driver, "\(pageHost.url.absoluteString)/help.html", shots.appendingPathComponent("bridge.png").path])
        }
        let output = try #require(run).output
        let last = output.split(separator: "\n").last.map(String.init) ?? ""
        let page = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "drive.py printed: \(output)")
        #expect(page["done"] as? Bool == true, "\(page)")
        let results = try #require(page["results"] as? [String: Any])
        func status(_ key: String) -> String? { (results[key] as? [String: Any])?["status"] as? String ?? results[key] as? String }
        #expect(status("view") == "recorded" && status("readStart") == "recorded" && status("readEnd") == "recorded")
        #expect((0..<3).allSatisfy { status("tap\($0)") == "recorded" })
        #expect(((results["invalid"] as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == "invalidName")
        #expect(((results["frame"] as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == "originNotAllowed")

        await pageHost.stop()
        await frameHost.stop()
        #expect(await deliverAll(logger).error == nil)
        await logger.close()
        await frameLogger.close()
        let events = try await collector.exportedEvents().map(\.event)
        #expect(events.map(\.name).sorted() == ["help.read", "help.tap", "help.tap", "help.tap", "help.view"], "\(events.map(\.name))")
        #expect(events.allSatisfy { $0.webOrigin == "http://127.0.0.1:\(port)" })
        #expect(Set(events.map(\.sessionID)).count == 1)
        #expect(Set(events.map(\.id)).count == events.count, "each once")
        await collector.stop()
    }
}
