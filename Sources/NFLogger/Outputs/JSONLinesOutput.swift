public import Foundation
import Dispatch

/// Events as JSON Lines in files on the device, for an app that collects them itself (to attach
/// to a support request, to hand to another process): one line per event, the event as one
/// object of docs/PROTOCOL.md's `events` (or `aggregates`) array, the same JSON a collector
/// receives.
///
/// Durable: ``deliver(_:)`` returns only once the batch's lines are written and synced to disk
/// (`fsync`), and only then may the logger delete the events.
///
/// ## The files in ``directory``
/// - `events.jsonl`: the file appended to (the directory and the file are created if missing).
/// - `events-<UTC yyyyMMdd'T'HHmmss.SSS>-<8 hex digits>.jsonl`: the file rotated out when an
///   append would take it past ``maxFileBytes``: complete, never written again, named so that
///   they sort oldest first (the time of the rotation; 1 ms after the previous one's if the clock
///   did not move on). Read and delete these to collect the events. A batch larger than ``maxFileBytes`` still goes whole into one
///   file, alone.
/// - `events.lock`: empty; see below.
///
/// At most ``maxFiles`` rotated files are kept: a rotation deletes the oldest beyond that. What
/// the app did not collect by then is lost, on purpose: it bounds the disk used, to about
/// (``maxFiles`` + 1) × ``maxFileBytes``.
///
/// ## At least once: de-duplicate by `uuid`
/// A batch whose lines were synced is written again if the app stops before the logger records
/// the delivery (or if a write fails after some lines went through): the files hold every event
/// at least once, and a reader keeps each event's `uuid` once.
///
/// A write that fails or is cut short never leaves a line that breaks a reader: the batch is
/// written in one write at the end of the file, and an append first truncates a partial last
/// line that an earlier attempt left. A reader of `events.jsonl` while it is being written may
/// see a last line without its newline: skip it (the rotated files end in whole lines).
///
/// ## Sharing a directory
/// Each append and rotation holds an advisory lock (`flock` on `events.lock`), so two outputs,
/// two loggers or two processes configured with the same directory never interleave lines. Only
/// writers that take the lock are kept out: do not write to the files otherwise.
public struct JSONLinesOutput: DurableOutput {
    public let id: String
    public let pattern: String
    /// Where the files are.
    public let directory: URL
    /// The size at which `events.jsonl` is rotated: at least 1,024. Default: 8 MiB.
    public let maxFileBytes: Int
    /// The rotated files kept: at least 1. Default: 16.
    public let maxFiles: Int

    public init(id: String = "file", directory: URL, pattern: String = "**", maxFileBytes: Int = 8 << 20, maxFiles: Int = 16) {
        self.id = id
        self.directory = directory
        self.pattern = pattern
        self.maxFileBytes = maxFileBytes
        self.maxFiles = maxFiles
    }

    /// Appends one line per event to `events.jsonl` and syncs it, rotating first if needed.
    /// Throws an error naming the path when the directory or a file cannot be created, written
    /// or synced (the batch is delivered again later), and ``OutputRefusal`` for an event whose
    /// JSON is not one line.
    public func deliver(_ batch: OutputBatch) async throws {
        let lines = try Self.lines(of: batch)
        let file = JSONLinesFile(directory: directory, maxFileBytes: maxFileBytes, maxFiles: maxFiles)
        // Blocking work: the lock may be held by another process for the length of its write and
        // sync. It waits on a dispatch thread, not on one of the few of the cooperative pool.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global(qos: .utility).async {
                do {
                    try file.append(lines, batchID: batch.id)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// The batch as JSON Lines: each event's JSON and a newline.
    static func lines(of batch: OutputBatch) throws(OutputRefusal) -> [UInt8] {
        var lines: [UInt8] = []
        lines.reserveCapacity(batch.events.reduce(0) { $0 + $1.json.utf8.count + 1 })
        for event in batch.events {
            let json = event.json.utf8
            // A newline inside would split the event over two lines that no reader can parse.
            if json.isEmpty || json.contains(UInt8(ascii: "\n")) {
                throw OutputRefusal("the event \(event.id) is not one line of JSON")
            }
            lines.append(contentsOf: json)
            lines.append(UInt8(ascii: "\n"))
        }
        return lines
    }

    func validate(field: String) throws(ConfigurationError) {
        guard directory.isFileURL, !directory.path.isEmpty else {
            throw .invalidField(field + ".directory", reason: "must be a file URL, got \(directory)")
        }
        if maxFileBytes < 1024 {
            throw .invalidField(field + ".max_file_bytes", reason: "must be at least 1024, got \(maxFileBytes)")
        }
        if maxFiles < 1 { throw .invalidField(field + ".max_files", reason: "must be at least 1, got \(maxFiles)") }
    }
}
