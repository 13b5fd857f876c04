import CollectorTestSupport
import Foundation
import NFLogger
import Testing

@Suite("The collector's health")
struct CollectorHealthTests {
    /// `nflog-collector serve` under a file-size limit of `kilobytes` (the shell's `ulimit -f`,
    /// with SIGXFSZ ignored so a write past it fails with EFBIG instead of killing the process):
    /// a disk that fills up, for this process only.
    final class LimitedCollector: Sendable {
        let process: ChildProcess
        let url: URL
        let errors: Pipe

        init(kilobytes: Int, database: URL) async throws {
            let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("nflog-collector")
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "ulimit -f \(kilobytes); trap '' XFSZ; exec \"$0\" serve --port 0 --db \"$1\"",
                                 executable.path, database.path]
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let first = await Child.firstLine(of: output)
            guard first.hasPrefix("listening on "), let url = URL(string: String(first.dropFirst("listening on ".count))) else {
                process.terminate()
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the collector said '\(first)'"])
            }
            self.process = process
            self.url = url
            self.errors = errors
        }

        /// Stops it and returns what it logged.
        func stop() async -> String {
            process.terminate()
            return await Child.offPool {
                let data = self.errors.fileHandleForReading.readDataToEndOfFile()
                self.process.waitUntilExit()
                return String(decoding: data, as: UTF8.self)
            }
        }
    }

    /// A batch of `count` events with fresh uuids, each with a 400-byte parameter.
    static func batch(_ count: Int) -> Data {
        let session = UUID().uuidString.lowercased()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let events = (0..<count).map { index in
            #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"disk.fill","kind":"point","type":"event","timestamp":\#(now + Int64(index)),"parameters":{"pad":"\#(String(repeating: "x", count: 400))"}}"#
        }
        return Data(#"{"version":1,"batch_id":"\#(UUID().uuidString.lowercased())","sent_at":\#(now),"sdk":{"name":"NFLogger","version":"0.1.0"},"context":{"app_id":"com.example.disk","app_version":"1.0","os_name":"Linux","os_version":"6","locale":"en","sessions":[{"id":"\#(session)","started_at":\#(now)}]},"events":[\#(events.joined(separator: ","))]}"#.utf8)
    }

    @Test("A full disk: uploads get 503 with Retry-After, /health says degraded (503) with the reason, the log says why once, not per request")
    func fullDisk() async throws {
        let scratch = TemporaryDirectory()
        let collector = try await LimitedCollector(kilobytes: 2_048, database: scratch.url.appendingPathComponent("collector.sqlite"))
        let transport = DefaultHTTPTransport(timeout: hangLimitSeconds)
        defer { transport.shutdown() }
        #expect(try await transport.send(TransportRequest(url: collector.url.appendingPathComponent("health"), method: "GET", headers: [:], body: Data())).status == 200)

        func upload(_ events: Int) async throws -> TransportResponse {
            try await transport.send(TransportRequest(url: collector.url.appendingPathComponent("v1/events"), method: "POST",
                headers: ["X-NFLog-Key": "dev-key", "Content-Type": "application/json"], body: Self.batch(events)))
        }
        var refused: TransportResponse?
        for _ in 0..<100 {
            let response = try await upload(500)
            if response.status != 200 { refused = response; break }
        }
        let full = try #require(refused, "2 MiB never filled up")
        let firstRefusal = ContinuousClock.now
        #expect(full.status == 503 && full.header("Retry-After") != nil)
        // Then smaller batches until not even one event fits: more refusals, to see that the log
        // does not repeat itself, and a disk with no room for /health's own probe either. Once no
        // upload has tried for a while (and a loaded machine takes that while anywhere) /health
        // probes with a batch's worth of pages, which may fit where the last batch did not.
        var refusals = 1
        var smallest = 500
        for size in [100, 20, 5, 1] {
            for _ in 0..<200 {
                let response = try await upload(size)
                guard response.status == 200 else {
                    #expect(response.status == 503 && response.header("Retry-After") != nil, "\(response.status)")
                    refusals += 1
                    smallest = size
                    break
                }
            }
        }
        #expect(smallest == 1, "a batch of \(smallest) events was the smallest refused")

        let health = try await transport.send(TransportRequest(url: collector.url.appendingPathComponent("health"), method: "GET", headers: [:], body: Data()))
        #expect(health.status == 503)
        let body = try JSONSerialization.jsonObject(with: health.body) as? [String: Any]
        #expect(body?["status"] as? String == "degraded")
        #expect((body?["reason"] as? String)?.contains("cannot write") == true, "\(String(describing: body))")

        let log = await collector.stop()
        // Said once, then at most once a minute with a count: one line, unless this machine took
        // a minute or more between the first refusal and the last.
        let minutes = Int((ContinuousClock.now - firstRefusal).components.seconds / 60)
        let lines = log.split(separator: "\n").filter { $0.contains("could not store a batch") }
        #expect(lines.count >= 1 && lines.count <= 1 + minutes && lines.count < refusals, "\(refusals) refusals: \(log)")
        #expect(lines.dropFirst().allSatisfy { $0.contains("times since the last report") }, "\(log)")
    }
}
