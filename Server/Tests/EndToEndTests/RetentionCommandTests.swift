import CollectorTestSupport
import Foundation
import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
import Testing

@Suite("nflog-collector serve --retention-days")
struct RetentionCommandTests {
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("nflog-collector")

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("nflog-retention-\(UUID().uuidString).sqlite").path
    }

    @Test("An invalid number of days is refused before anything starts, with a message that says what is allowed",
          arguments: ["0", "-3", "36501", "seven"])
    func invalidDays(days: String) async throws {
        let message = try await Self.refused(["--retention-days=\(days)"])
        #expect(message.contains("--retention-days") || message.contains("retention-days"), "\(message)")
        if Int(days) != nil { #expect(message.contains("between 1 and 36500"), "\(message)") }
    }

    /// Runs `serve` with `flags`, expects it to fail before it opens its store, and returns what
    /// it printed on stderr.
    static func refused(_ flags: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let path = temporaryPath()
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = ["serve", "--port", "0", "--db", path] + flags
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let message = await Child.offPool { () -> String in
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(process.terminationStatus != 0, sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: path), sourceLocation: sourceLocation)  // refused before the store was opened
        return message
    }

    @Test("Rollup days below the events' days, or without --retention-days, are refused before anything starts, saying why",
          arguments: [(["--retention-days", "30", "--rollup-retention-days", "10"], "between --retention-days (30) and 36500"),
                      (["--rollup-retention-days", "500"], "needs --retention-days")])
    func invalidRollupDays(flags: [String], expected: String) async throws {
        let message = try await Self.refused(flags)
        #expect(message.contains(expected), "\(message)")
    }

    @Test("serve --retention-days 2 drops the events received more than two days ago at start, logs it, and counts them")
    func dropsAtStart() async throws {
        let path = Self.temporaryPath()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            let store = try SQLiteEventStore(path: path, durableCommits: false)
            for (count, age) in [(25, Int64(3)), (5, Int64(0))] {
                let session = UUID().uuidString.lowercased()
                let events = (0..<count).map { _ in
                    #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"ui.tap","kind":"point","type":"event","timestamp":1750000000000}"#
                }
                let batch = try BatchDecoder().decode(Array("""
                    {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":1750000000500,"sdk":{"name":"NFLogger","version":"0.1.0"},
                     "context":{"app_id":"a","app_version":"1","os_name":"iOS","os_version":"18","locale":"en","sessions":[{"id":"\(session)","started_at":1}]},
                     "events":[\(events.joined(separator: ","))]}
                    """.utf8))
                _ = try await store.store(batch, app: "dev", receivedAt: now - age * 86_400_000)
            }
            await store.close()
        }
        let process = ChildProcess()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--port", "0", "--db", path, "--retention-days", "2"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let first = await Child.firstLine(of: output)
        #expect(first.hasPrefix("listening on "))
        let reader = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        let deadline = ContinuousClock.now + hangLimit
        var expired: Int64 = 0
        while ContinuousClock.now < deadline {
            expired = try reader.scalarInt("SELECT events_expired FROM totals WHERE app = 'dev'")
            if expired == 25 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        let log = await Child.offPool { () -> String in
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(expired == 25)
        #expect(try reader.scalarInt("SELECT count(*) FROM events") == 5)
        #expect(try reader.scalarInt("SELECT events FROM totals WHERE app = 'dev'") == 30)
        #expect(log.contains("retention: dropped 25 events received before"), "\(log)")
    }
}
