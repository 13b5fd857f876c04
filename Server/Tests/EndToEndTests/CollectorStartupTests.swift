import Foundation
import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A file as it is now: its bytes, its modification time, and which of SQLite's files are beside
/// it. A command that must change nothing leaves all three as they were.
struct FileState: Equatable, CustomStringConvertible {
    let bytes: Data?
    let modified: Date?
    let beside: [String]

    init(_ path: String) {
        bytes = FileManager.default.contents(atPath: path)
        modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        beside = ["-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: path + $0) }
    }

    var description: String { "\(bytes.map { "\($0.count) bytes" } ?? "no file"), modified \(modified.map { "\($0)" } ?? "-"), beside: \(beside)" }
}

/// Files and directories a test makes read-only for real: by mode, and, for root (whom modes do
/// not stop), with the immutable attribute (`chattr +i`), taken off again by ``release(_:)``.
enum ReadOnlyFiles {
    static let isRoot = getuid() == 0

    /// Whether this machine can make a file read-only for this user.
    static let available: Bool = {
        guard isRoot else { return true }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-immutable-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: probe, contents: Data())
        defer { _ = try? Child.runProcess("/usr/bin/chattr", ["-i", probe]); try? FileManager.default.removeItem(atPath: probe) }
        return (try? Child.runProcess("/usr/bin/chattr", ["+i", probe]))?.status == 0 && open(probe, O_RDWR) < 0
    }()

    static func makeReadOnly(_ path: String, directory: Bool = false) throws {
        try FileManager.default.setAttributes([.posixPermissions: directory ? 0o555 : 0o444], ofItemAtPath: path)
        if isRoot { #expect(try Child.runProcess("/usr/bin/chattr", ["+i", path]).status == 0) }
    }

    static func release(_ path: String) {
        if isRoot { _ = try? Child.runProcess("/usr/bin/chattr", ["-i", path]) }
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    }
}

/// The collector's command when the world is not as it needs: a port in use, files missing,
/// unreadable or of the wrong kind, a read-only database, a database already served, and the read
/// commands on files that are not the collector's. Each is the real executable; each refusal
/// exits 1 with a message that names the flag, path or address and what to do, and writes
/// nothing.
@Suite("nflog-collector's start-up and read errors")
struct CollectorStartupTests {
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        try await ReportCommandTests.run(arguments)
    }

    /// A fresh directory of its own (removed by the caller).
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-startup-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A collector database of this release holding one batch.
    static func collectorDatabase(_ path: String) async throws {
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        _ = try await store.store(try ReportCommandTests.batch(version: "1.0", points: 2, at: 1_750_000_000_000), app: "shop",
                                  receivedAt: 1_750_000_001_000)
        await store.close()
    }

    @Test("serve on a port in use names the address and what to do, and creates no database")
    func portInUse() async throws {
        let taken = try ReservedPort(listening: true)
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/collector.sqlite"
        let result = try await Self.run(["serve", "--port", "\(taken.port)", "--db", path])
        #expect(result.status == 1)
        #expect(result.errors.contains("cannot listen on 127.0.0.1:\(taken.port): the address is in use (another process listens there); choose another --port, or --port 0 for a free one"), "\(result.errors)")
        #expect(!result.output.contains("listening"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [])
    }

    @Test("serve names the flag and the path of a file that is not there, before creating anything",
          arguments: ["--keys", "--read-tokens", "--policy-signing-key", "--tls-cert", "--tls-key", "--password-file", "--policies"])
    func missingFile(flag: String) async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/missing.json"
        let other = directory + "/other.pem"  // the other TLS file, there, so only the missing one is named
        _ = FileManager.default.createFile(atPath: other, contents: Data("not read".utf8))
        let path = directory + "/collector.sqlite"
        var arguments = ["serve", "--port", "0", flag, missing]
        switch flag {
        case "--tls-cert": arguments += ["--tls-key", other]
        case "--tls-key": arguments += ["--tls-cert", other]
        default: break
        }
        arguments += flag == "--password-file" ? ["--postgres", "postgres://nflog@127.0.0.1:1/nflog"] : ["--db", path]
        let result = try await Self.run(arguments)
        #expect(result.status == 1)
        let expected = flag == "--policies" ? "--policies: no such directory \(missing)" : "\(flag): no such file \(missing)"
        #expect(result.errors.contains("Error: \(expected)\n"), "\(result.errors)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A file of the wrong content is named with its flag and what is wrong in it")
    func badContent() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/file"
        _ = FileManager.default.createFile(atPath: file, contents: Data("{}".utf8))
        let path = directory + "/collector.sqlite"
        let cases = [
            ("--read-tokens", "--read-tokens: read tokens file \(file): must be a JSON object with a \"tokens\" array"),
            ("--keys", "--keys: keys file \(file): must be a JSON object with a \"keys\" array"),
            ("--policy-signing-key", "--policy-signing-key: \(file) does not hold a base64 Ed25519 private key (make one with: nflog-collector keygen --private-key FILE)"),
        ]
        for (flag, expected) in cases {
            let result = try await Self.run(["serve", "--port", "0", "--db", path, flag, file])
            #expect(result.status == 1)
            #expect(result.errors.contains(expected), "\(flag): \(result.errors)")
        }
        let key = directory + "/key.pem"
        _ = FileManager.default.createFile(atPath: key, contents: Data("{}".utf8))
        let tls = try await Self.run(["serve", "--port", "0", "--db", path, "--tls-cert", file, "--tls-key", key])
        #expect(tls.status == 1)
        #expect(tls.errors.contains("--tls-cert: \(file): holds no PEM certificate") || tls.errors.contains("--tls-cert: \(file): is not a PEM certificate"),
                "\(tls.errors)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A file this user cannot read is said to be unreadable", .enabled(if: !ReadOnlyFiles.isRoot, "root reads every file"))
    func unreadableFile() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/keys.json"
        _ = FileManager.default.createFile(atPath: file, contents: Data("{}".utf8), attributes: [.posixPermissions: 0])
        let result = try await Self.run(["serve", "--port", "0", "--db", directory + "/c.sqlite", "--keys", file])
        #expect(result.status == 1)
        #expect(result.errors.contains("--keys: cannot read \(file) (Permission denied)"), "\(result.errors)")
    }

    /// The files the read commands are tried on, each made in `directory`; `nil` for none.
    enum NotReadable: String, CaseIterable, CustomTestStringConvertible {
        case missing, empty, notSQLite, sdkDatabase, olderCollector, newerCollector
        var testDescription: String { rawValue }

        func make(_ path: String) async throws {
            switch self {
            case .missing: break
            case .empty: _ = FileManager.default.createFile(atPath: path, contents: Data())
            case .notSQLite: _ = FileManager.default.createFile(atPath: path, contents: Data(String(repeating: "not a database\n", count: 100).utf8))
            case .sdkDatabase:
                let logger = try NFLogger(configuration: Configuration(databaseURL: URL(fileURLWithPath: path), appID: "com.example.shop", appVersion: "1.0"))
                _ = await logger.logEvent(name: "ui.tap")
                await logger.close()
            case .olderCollector, .newerCollector:
                try await CollectorStartupTests.collectorDatabase(path)
                let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
                if self == .olderCollector {
                    // Version 9 as it was: migrations 14 to 10 undone (their tables, triggers and indexes).
                    try connection.execute("""
                        DROP TABLE event_past; DROP TABLE duration_past; DROP TABLE origin_past; DROP TABLE funnel_past; DROP TABLE session_past;
                        DROP TABLE event_days; DROP TABLE duration_days; DROP TABLE origin_days; DROP TABLE funnel_days; DROP TABLE session_days;
                        DROP TABLE rollup_compaction; DROP TABLE funnel_hours; DROP TABLE session_hours; DROP INDEX sessions_started; DROP TABLE event_hours; DROP TABLE duration_hours; DROP TABLE origin_hours; DROP TABLE rollup_backfill;
                        DROP INDEX events_hours; DROP INDEX events_runs; DROP INDEX events_steps; DROP TABLE context_counts;
                        PRAGMA user_version = 9
                        """)
                } else {
                    try connection.execute("PRAGMA user_version = 99")
                }
            }
        }

        func expected(_ path: String) -> [String] {
            switch self {
            case .missing: ["--db: no such file \(path)"]
            case .empty: ["\(path) is not a collector database (the file is empty)"]
            case .notSQLite: ["\(path) is not a collector database (it is not a SQLite file)"]
            case .sdkDatabase: ["\(path) is not a collector database (it is an NFLogger SDK database"]
            case .olderCollector: ["\(path) was written by an older collector (schema version 9; this one reads version ",
                                   "run nflog-collector serve --db \(path) once to migrate it"]
            case .newerCollector: ["\(path) was written by a newer collector (schema version 99; this one reads up to "]
            }
        }
    }

    @Test("report and export refuse a file that is not this release's collector database, saying what it is, and change nothing in it",
          arguments: NotReadable.allCases)
    func readCommandsChangeNothing(file: NotReadable) async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/events.sqlite"
        try await file.make(path)
        let before = FileState(path)
        let listing = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        for command in [["report"], ["report", "--json"], ["report", "--series", "hour"], ["export"], ["export", "--aggregates"]] {
            let result = try await Self.run(command + ["--db", path])
            #expect(result.status == 1, "\(command)")
            for part in file.expected(path) { #expect(result.errors.contains(part), "\(command): \(result.errors)") }
            #expect(!result.errors.contains("SQLite error"), "\(command): \(result.errors)")
            #expect(FileState(path) == before, "\(command)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == listing, "\(command)")
        }
    }

    @Test("report reads a collector database without writing it; an older one reads once serve has migrated it")
    func readsWithoutWriting() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/events.sqlite"
        try await NotReadable.olderCollector.make(path)
        let serve = try Child.start(["serve", "--port", "0", "--db", path], executable: RetentionCommandTests.executable)
        defer { if serve.process.isRunning { serve.process.terminate() } }
        #expect(await Child.firstLine(of: serve.output).hasPrefix("listening on "))
        serve.process.terminate()
        #expect(await Executables.waitForExit(serve.process, seconds: 60))
        let before = FileState(path)
        let report = try await Self.run(["report", "--db", path, "--app", "shop", "--json"])
        #expect(report.status == 0, "\(report.errors)")
        #expect(report.output.contains("\"events_stored\" : 4"), "\(report.output)")
        let export = try await Self.run(["export", "--db", path])
        #expect(export.status == 0 && export.output.split(separator: "\n").count == 4, "\(export.errors)")
        #expect(FileState(path).bytes == before.bytes && FileState(path).modified == before.modified)
    }

    @Test("serve on a read-only database, or in a read-only directory, says so and exits before listening, changing nothing",
          .enabled(if: ReadOnlyFiles.available, "needs chattr to make a file read-only for root"))
    func readOnly() async throws {
        let directory = try Self.directory()
        defer { ReadOnlyFiles.release(directory); try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/events.sqlite"
        try await Self.collectorDatabase(path)
        try ReadOnlyFiles.makeReadOnly(path)
        defer { ReadOnlyFiles.release(path) }
        let before = FileState(path)
        let result = try await Self.run(["serve", "--port", "0", "--db", path])
        #expect(result.status == 1)
        #expect(result.errors.contains("Error: \(path) is read-only ("), "\(result.errors)")
        #expect(result.errors.contains("serve writes to its database; make it writable or choose another --db"), "\(result.errors)")
        #expect(!result.output.contains("listening"))
        #expect(FileState(path) == before)

        let readOnlyDirectory = directory + "/closed"
        try FileManager.default.createDirectory(atPath: readOnlyDirectory, withIntermediateDirectories: false)
        try ReadOnlyFiles.makeReadOnly(readOnlyDirectory, directory: true)
        defer { ReadOnlyFiles.release(readOnlyDirectory) }
        let fresh = readOnlyDirectory + "/events.sqlite"
        let refused = try await Self.run(["serve", "--port", "0", "--db", fresh])
        #expect(refused.status == 1)
        #expect(refused.errors.contains("Error: cannot create \(fresh): the directory \(readOnlyDirectory) is not writable"), "\(refused.errors)")
        #expect(!refused.output.contains("listening"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: readOnlyDirectory) == [])
    }

    @Test("A second serve on the same SQLite file is refused, naming the first one's pid; after kill -9 of the first, serve starts again")
    func secondServe() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/events.sqlite"
        let first = try Child.start(["serve", "--port", "0", "--db", path], executable: RetentionCommandTests.executable)
        defer { if first.process.isRunning { kill(first.process.processIdentifier, SIGKILL) } }
        #expect(await Child.firstLine(of: first.output).hasPrefix("listening on "))

        let second = try await Self.run(["serve", "--port", "0", "--db", path])
        #expect(second.status == 1)
        // The pid comes from /proc/locks, when it can be read there: the refusal does not depend on it.
        let named = "Error: \(path) is already served by another nflog-collector (pid \(first.process.processIdentifier)); stop it first, or choose another --db"
        let unnamed = "Error: \(path) is already served by another nflog-collector; stop it first, or choose another --db"
        #expect(second.errors.contains(named) || second.errors.contains(unnamed), "\(second.errors)")
        #expect(!second.output.contains("listening"))
        // Reading beside it is fine: report takes no lock.
        let report = try await Self.run(["report", "--db", path])
        #expect(report.status == 0, "\(report.errors)")

        kill(first.process.processIdentifier, SIGKILL)
        #expect(await Executables.waitForExit(first.process, seconds: 60))
        let again = try Child.start(["serve", "--port", "0", "--db", path], executable: RetentionCommandTests.executable)
        defer { if again.process.isRunning { again.process.terminate() } }
        #expect(await Child.firstLine(of: again.output).hasPrefix("listening on "))
        again.process.terminate()
        #expect(await Executables.waitForExit(again.process, seconds: 60))
    }
}
