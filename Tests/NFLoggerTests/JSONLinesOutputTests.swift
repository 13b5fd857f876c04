import Foundation
import Testing
@testable import NFLogger
import NFLogTestSupport

@Suite("JSONLinesOutput: events as JSON Lines in files, synced, rotated, locked")
struct JSONLinesOutputTests {
    /// A point event whose JSON is about `padding` bytes longer than the minimum (~110 bytes).
    static func event(_ number: Int, padding: Int = 0) -> OutputEvent {
        let id = UUID()
        let json = #"{"uuid":"\#(id.uuidString.lowercased())","name":"test.event","n":\#(number),"pad":"\#(String(repeating: "x", count: padding))"}"#
        return OutputEvent(id: id, kind: .point, name: "test.event", type: "default", timestamp: Date(), json: json)
    }

    static func batch(_ events: [OutputEvent]) -> OutputBatch {
        OutputBatch(id: UUID(), events: events, json: Data())
    }

    static func batches(_ count: Int, eventsEach: Int, padding: Int = 0) -> [OutputBatch] {
        (0..<count).map { index in batch((0..<eventsEach).map { event(index * eventsEach + $0, padding: padding) }) }
    }

    /// The file's lines; it must end in a newline (no partial last line).
    static func lines(of url: URL) throws -> [String] {
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "\(url.lastPathComponent) ends in a partial line")
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    static func parses(_ line: String) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any]
    }

    /// The rotated files' names, oldest first.
    static func rotated(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("events-") && $0.hasSuffix(".jsonl") }.sorted()
    }

    static func size(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
    }

    @Test("Each event is one line, its JSON exactly, in order, readable once deliver returns")
    func appendsLines() async throws {
        let directory = TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("out/jsonl")  // created on the first delivery
        let output = JSONLinesOutput(directory: folder)
        let batches = Self.batches(3, eventsEach: 4)
        var expected: [String] = []
        for batch in batches {
            try await output.deliver(batch)
            expected += batch.events.map(\.json)
            #expect(try Self.lines(of: folder.appendingPathComponent("events.jsonl")) == expected)
        }
        let lines = try Self.lines(of: folder.appendingPathComponent("events.jsonl"))
        #expect(lines.count == 12)
        #expect(lines.allSatisfy(Self.parses))
        #expect(try Self.rotated(in: folder).isEmpty)
        #expect(output.id == "file" && output.pattern == "**" && output.maxFileBytes == 8 << 20 && output.maxFiles == 16)
    }

    @Test("An empty batch writes nothing; an event whose JSON spans lines is refused")
    func emptyAndMultilineEvents() async throws {
        let directory = TemporaryDirectory()
        let output = JSONLinesOutput(directory: directory.url)
        try await output.deliver(Self.batch([]))
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("events.jsonl").path))
        let broken = OutputEvent(id: UUID(), kind: .point, name: "a", type: "default", timestamp: Date(), json: "{\n}")
        await #expect(throws: OutputRefusal("the event \(broken.id) is not one line of JSON")) {
            try await output.deliver(Self.batch([Self.event(1), broken]))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("events.jsonl").path))
    }

    @Test("Past maxFileBytes the file is rotated: every rotated file is at most that size, nothing lost or reordered")
    func rotatesBySize() async throws {
        let directory = TemporaryDirectory()
        let output = JSONLinesOutput(directory: directory.url, maxFileBytes: 1024, maxFiles: 100)
        let batches = Self.batches(20, eventsEach: 2, padding: 100)  // ~430 bytes a batch: two fit in a file
        for batch in batches { try await output.deliver(batch) }

        let rotated = try Self.rotated(in: directory.url)
        #expect(rotated.count >= 9)
        let pattern = /events-\d{8}T\d{6}\.\d{3}-[0-9a-f]{8}\.jsonl/
        var all: [String] = []
        for name in rotated {
            #expect(name.wholeMatch(of: pattern) != nil, "\(name)")
            let url = directory.url.appendingPathComponent(name)
            #expect(try Self.size(url) <= 1024, "\(name)")
            #expect(try Self.size(url) > 0, "\(name)")
            all += try Self.lines(of: url)
        }
        all += try Self.lines(of: directory.url.appendingPathComponent("events.jsonl"))
        #expect(all == batches.flatMap { $0.events.map(\.json) })
    }

    @Test("A batch larger than maxFileBytes goes whole into one file, alone")
    func oversizedBatch() async throws {
        let directory = TemporaryDirectory()
        let output = JSONLinesOutput(directory: directory.url, maxFileBytes: 1024, maxFiles: 10)
        let small = Self.batch([Self.event(0)])
        let large = Self.batch((1...5).map { Self.event($0, padding: 400) })  // ~2.6 KB
        let after = Self.batch([Self.event(6)])
        for batch in [small, large, after] { try await output.deliver(batch) }

        let rotated = try Self.rotated(in: directory.url).map { directory.url.appendingPathComponent($0) }
        #expect(rotated.count == 2)
        #expect(try rotated.map(Self.lines(of:)) == [small.events.map(\.json), large.events.map(\.json)])
        #expect(try Self.size(rotated[1]) > 1024)
        #expect(try Self.lines(of: directory.url.appendingPathComponent("events.jsonl")) == after.events.map(\.json))
    }

    @Test("Only the newest maxFiles rotated files are kept")
    func deletesOldestRotatedFiles() async throws {
        let directory = TemporaryDirectory()
        let output = JSONLinesOutput(directory: directory.url, maxFileBytes: 1024, maxFiles: 2)
        let batches = Self.batches(6, eventsEach: 1, padding: 600)  // one batch per file: 5 rotations
        for batch in batches { try await output.deliver(batch) }

        let rotated = try Self.rotated(in: directory.url)
        #expect(rotated.count == 2)
        #expect(try rotated.map { try Self.lines(of: directory.url.appendingPathComponent($0)) } == [
            batches[3].events.map(\.json), batches[4].events.map(\.json),
        ])
        #expect(try Self.lines(of: directory.url.appendingPathComponent("events.jsonl")) == batches[5].events.map(\.json))
    }

    @Test("Rotated names follow the order of rotation even when the clock stands still or goes back")
    func rotatedNamesSortInOrder() throws {
        let directory = TemporaryDirectory()
        let file = JSONLinesFile(directory: directory.url, maxFileBytes: 1024, maxFiles: 10)
        let noon = Date(timeIntervalSince1970: 1_795_000_000.5)
        let batches = Self.batches(4, eventsEach: 1, padding: 1000)
        for (batch, now) in zip(batches, [noon, noon, noon, noon.addingTimeInterval(-3600)]) {
            try file.append(Array(batch.events[0].json.utf8) + [UInt8(ascii: "\n")], batchID: batch.id, now: now)
        }
        let rotated = try Self.rotated(in: directory.url)
        #expect(rotated.map { String($0.prefix(26)) } == [
            "events-20261118T110640.500", "events-20261118T110640.501", "events-20261118T110640.502",
        ])
        #expect(try rotated.map { try Self.lines(of: directory.url.appendingPathComponent($0)) } == batches.prefix(3).map { $0.events.map(\.json) })
        #expect(JSONLinesFile.rotatedMilliseconds(ofName: rotated[2]) == 1_795_000_000_502)
        #expect(JSONLinesFile.rotatedMilliseconds(ofName: "events.jsonl") == nil)
    }

    @Test("A partial last line left by a torn write is truncated before the next append")
    func truncatesPartialLine() async throws {
        let directory = TemporaryDirectory()
        let output = JSONLinesOutput(directory: directory.url)
        let first = Self.batch([Self.event(1), Self.event(2)])
        try await output.deliver(first)
        let url = directory.url.appendingPathComponent("events.jsonl")
        // What a crash in the middle of the next write leaves: part of a line, no newline.
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"uuid":"0193a7c2-5b1e-7c3d-9f00-1a2b3c"#.utf8))
        try handle.close()

        let second = Self.batch([Self.event(3)])
        try await output.deliver(second)
        let lines = try Self.lines(of: url)
        #expect(lines == (first.events + second.events).map(\.json))
        #expect(lines.allSatisfy(Self.parses))
    }

    @Test("A file with no whole line at all is emptied before the append")
    func truncatesFileWithoutNewline() async throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("events.jsonl")
        try Data(String(repeating: "y", count: 100_000).utf8).write(to: url)  // longer than a read chunk
        let output = JSONLinesOutput(directory: directory.url)
        let batch = Self.batch([Self.event(1)])
        try await output.deliver(batch)
        #expect(try Self.lines(of: url) == batch.events.map(\.json))
    }

    @Test("Two outputs on one directory, delivering concurrently, never interleave lines")
    func concurrentWriters() async throws {
        let directory = TemporaryDirectory()
        let outputs = [
            JSONLinesOutput(id: "a", directory: directory.url, maxFileBytes: 16 * 1024, maxFiles: 1000),
            JSONLinesOutput(id: "b", directory: directory.url, maxFileBytes: 16 * 1024, maxFiles: 1000),
        ]
        let batches = Self.batches(200, eventsEach: 5, padding: 300)  // ~2 KB a batch, ~400 KB in all
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, batch) in batches.enumerated() {
                group.addTask { try await outputs[index % 2].deliver(batch) }
            }
            try await group.waitForAll()
        }

        var lines: [String] = []
        for name in try Self.rotated(in: directory.url) + ["events.jsonl"] {
            let url = directory.url.appendingPathComponent(name)
            lines += try Self.lines(of: url)
            if name != "events.jsonl" { #expect(try Self.size(url) <= 16 * 1024) }
        }
        #expect(lines.allSatisfy(Self.parses))
        #expect(lines.count == 1000)
        #expect(Set(lines) == Set(batches.flatMap { $0.events.map(\.json) }))
        #expect(try Self.rotated(in: directory.url).count >= 20)
    }

    @Test("A directory that cannot be created throws an error naming the path")
    func unwritableDirectory() async throws {
        let directory = TemporaryDirectory()
        let blocker = directory.url.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: blocker)
        let folder = blocker.appendingPathComponent("logs")  // under a file: cannot be created, even by root
        let output = JSONLinesOutput(directory: folder)
        let error = try await #require(throws: JSONLinesFileError.self) {
            try await output.deliver(Self.batch([Self.event(1)]))
        }
        #expect(error.path == folder.path)
        #expect(error.operation == "create the directory")
        #expect("\(error)".contains(folder.path))
        #expect(error.localizedDescription.contains(folder.path))
    }

    @Test("A directory whose files cannot be written throws an error naming the path")
    func unwritableFile() async throws {
        let directory = TemporaryDirectory()
        // events.jsonl is a directory: it cannot be opened for writing (also by root).
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("events.jsonl"), withIntermediateDirectories: true)
        let output = JSONLinesOutput(directory: directory.url)
        let error = try await #require(throws: JSONLinesFileError.self) {
            try await output.deliver(Self.batch([Self.event(1)]))
        }
        #expect(error.path == directory.url.appendingPathComponent("events.jsonl").path)
        #expect("\(error)" == "cannot open \(error.path): Is a directory")
    }

    @Test("Invalid limits and directories are configuration errors naming the field", arguments: [
        (JSONLinesOutput(directory: URL(fileURLWithPath: "/tmp/x"), maxFileBytes: 1023),
         ConfigurationError.invalidField("outputs.file.max_file_bytes", reason: "must be at least 1024, got 1023")),
        (JSONLinesOutput(directory: URL(fileURLWithPath: "/tmp/x"), maxFiles: 0),
         .invalidField("outputs.file.max_files", reason: "must be at least 1, got 0")),
        (JSONLinesOutput(id: "jsonl", directory: URL(string: "https://example.com/x")!),
         .invalidField("outputs.jsonl.directory", reason: "must be a file URL, got https://example.com/x")),
    ])
    func validation(output: JSONLinesOutput, error: ConfigurationError) throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.outputs = [output]
        #expect(throws: error) { try configuration.validate() }
        #expect(throws: error) { try NFLogger(configuration: configuration) }
    }

    @Test("Limits at their minimum are valid")
    func validLimits() throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.outputs = [JSONLinesOutput(directory: directory.url, maxFileBytes: 1024, maxFiles: 1)]
        try configuration.validate()
    }
}
