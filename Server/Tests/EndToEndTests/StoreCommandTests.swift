import CollectorTestSupport
import Foundation
import NFLogCollector
import Testing
@_spi(NFLogShared) import NFLogSupport

/// `nflog-collector report` and `export` on a PostgreSQL store (`--store postgres://…`,
/// `--postgres URL`), against the same batches in a SQLite file (`--db`). Each run writes under an
/// app of its own in the server's database, so runs never see each other's events.
@Suite("nflog-collector report and export on PostgreSQL",
       .enabled(if: TestDatabase.serverURL != nil, "NFLOG_POSTGRES_URL is not set: these tests need a PostgreSQL server (scripts/postgres start DIR prints a URL)"))
struct StoreCommandTests {
    /// Runs the collector's command with `arguments`; returns its exit status and standard output.
    static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, output: String) {
        let process = ChildProcess()
        process.executableURL = RetentionCommandTests.executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = await Child.offPool { () -> String in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        return (process.terminationStatus, text)
    }

    static func batch(session: String, events: [String]) throws -> Batch {
        try BatchDecoder().decode(Array("""
            {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":1750000000500,"sdk":{"name":"NFLogger","version":"0.1.0"},
             "context":{"app_id":"a","app_version":"1","os_name":"iOS","os_version":"18","locale":"en",
                        "sessions":[{"id":"\(session)","started_at":1749999990000,"ended_at":1750000030000}]},
             "events":[\(events.joined(separator: ","))]}
            """.utf8))
    }

    @Test("report --json and export print the same as on a SQLite file with the same batches; --password-file is read")
    func sameAsSQLite() async throws {
        let url = try #require(TestDatabase.serverURL)
        let app = "cli-" + UUID().uuidString.lowercased()
        let path = RetentionCommandTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = UUID().uuidString.lowercased()
        var events: [String] = []
        for i in 0..<12 {
            events.append(#"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"form.signup","kind":"span","type":"usecase","timestamp":1750000000000,"start":1750000000000,"end":1750000001000,"duration_ms":\#(Double(i) * 10.3 + 0.1),"end_parameters":{"completed":\#(i % 3 != 0)}}"#)
            events.append(#"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"net.request","kind":"span","type":"network","timestamp":1750000000000,"start":1750000000000,"end":1750000000100,"duration_ms":\#(Double(i * i) * 1.7)}"#)
            events.append(#"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"ui.tap","kind":"point","type":"event","timestamp":1750000000000}"#)
        }
        let batches = [try Self.batch(session: session, events: Array(events.prefix(20))),
                       try Self.batch(session: session, events: Array(events.dropFirst(20)))]
        let postgres = try await PostgresEventStore(url: url, poolSize: 1)
        let sqlite = try SQLiteEventStore(path: path, durableCommits: false)
        for (offset, batch) in (batches + batches).enumerated() {
            _ = try await postgres.store(batch, app: app, receivedAt: 1_750_000_000_000 + Int64(offset))
            _ = try await sqlite.store(batch, app: app, receivedAt: 1_750_000_000_000 + Int64(offset))
        }
        await postgres.close()
        await sqlite.close()

        let passwordFile = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-pw-\(UUID().uuidString)").path
        try "unused-with-trust-auth\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: passwordFile) }

        let expected = try await Self.run(["report", "--db", path, "--app", app, "--json"])
        #expect(expected.status == 0 && expected.output.contains("\"use_cases\""))
        for store in [["--store", url], ["--postgres", url], ["--postgres", url, "--password-file", passwordFile]] {
            let report = try await Self.run(["report"] + store + ["--app", app, "--json"])
            #expect(report.status == 0)
            #expect(report.output == expected.output)
        }
        let text = try await Self.run(["report", "--postgres", url, "--app", app])
        #expect(text.output == (try await Self.run(["report", "--db", path, "--app", app])).output)

        let exported = try await Self.run(["export", "--db", path, "--app", app])
        #expect(exported.output.split(separator: "\n").count == 36)
        let pgExport = try await Self.run(["export", "--store", url, "--app", app])
        #expect(pgExport.status == 0 && pgExport.output == exported.output)
    }

    @Test("A SQLite file that is not there is refused; two stores at once are refused")
    func refusals() async throws {
        let url = try #require(TestDatabase.serverURL)
        let missing = RetentionCommandTests.temporaryPath()
        #expect(try await Self.run(["report", "--db", missing]).status != 0)
        #expect(try await Self.run(["export", "--db", missing]).status != 0)
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(try await Self.run(["report", "--db", missing, "--postgres", url]).status != 0)
    }
}
