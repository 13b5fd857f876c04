import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a ``JSONLinesOutput`` in its directory, and the one way they change: whole lines
/// appended under an advisory lock, the file rotated and the oldest rotated files deleted on the
/// way.
///
/// - `events.jsonl`: the file appended to.
/// - `events-<UTC yyyyMMdd'T'HHmmss.SSS>-<first 8 hex digits of the batch id>.jsonl`: the files
///   rotated out of it, never written again; at most `maxFiles`, the oldest deleted first. The
///   time is the rotation's, or 1 ms after the newest rotated file's if the clock is not past it,
///   so that names sort in the order of rotation (a `-2`, `-3`, … before `.jsonl` should a name
///   be taken all the same).
/// - `events.lock`: empty, locked with `flock` around each append and rotation. It is never
///   renamed, so a writer that waited for it does not end up holding the lock of a file that
///   was rotated away meanwhile.
///
/// Holds no state between appends: everything is read from the directory under the lock, so
/// any number of values (in this process or others) may share a directory.
struct JSONLinesFile: Sendable {
    static let currentName = "events.jsonl"
    static let lockName = "events.lock"
    static let rotatedPrefix = "events-"
    static let rotatedSuffix = ".jsonl"

    let directory: URL
    /// A non-empty file is rotated before an append would take it past this.
    let maxFileBytes: Int
    /// The rotated files kept.
    let maxFiles: Int

    var currentPath: String { path(Self.currentName) }

    /// Appends `lines` (whole lines, each ending in `\n`) to `events.jsonl` and syncs it to disk,
    /// rotating first if they do not fit. When it returns, the lines are on disk; when it throws,
    /// the file ends in a whole line or is repaired by the next append.
    func append(_ lines: [UInt8], batchID: UUID, now: Date = Date()) throws(JSONLinesFileError) {
        guard !lines.isEmpty else { return }
        try createDirectory()
        let lock = try OpenFile(path(Self.lockName), flags: O_RDWR | O_CREAT)
        // Released when `lock` is closed: kept alive to the end of this scope (ARC may release
        // a value after its last use).
        defer { withExtendedLifetime(lock) {} }
        try lock.lockExclusively()

        var file = try OpenFile(currentPath, flags: O_RDWR | O_CREAT)
        var newEntry = file.created
        var size = try dropPartialLine(of: file)
        if size > 0, size + lines.count > maxFileBytes {
            try rotate(batchID: batchID, now: now)
            file = try OpenFile(currentPath, flags: O_RDWR | O_CREAT)
            newEntry = true
            size = 0
        }
        // The rename and the new file's name are in the directory: synced before the lines, so
        // that synced lines are never under a name a power loss takes back.
        if newEntry { try syncDirectory() }

        do throws(JSONLinesFileError) {
            // Seek to the end and write the batch in one write (looping only over short writes),
            // then sync: the lines become durable together.
            try file.seekToEnd(expected: size)
            try file.writeAll(lines)
            try file.sync()
        } catch {
            // Take back what was written, so that a retry does not leave the batch's lines twice.
            // If this fails too, the next append truncates a partial last line (whole lines stay:
            // the file is at-least-once anyway).
            _ = ftruncate(file.descriptor, off_t(size))
            throw error
        }
    }

    /// The size of the file after dropping a partial last line: one left by a write that failed
    /// or was cut short by a crash (the file does not end in `\n`) is truncated back to the last
    /// newline, so that appending does not glue two lines into one that no reader can parse.
    private func dropPartialLine(of file: OpenFile) throws(JSONLinesFileError) -> Int {
        let size = try file.size()
        guard size > 0, try file.byte(at: size - 1) != UInt8(ascii: "\n") else { return size }
        var end = size - 1
        var kept = 0
        // Backwards in chunks, to the last newline (or the start: no whole line at all).
        search: while end > 0 {
            let start = max(0, end - 65_536)
            let chunk = try file.bytes(in: start..<end)
            if let newline = chunk.lastIndex(of: UInt8(ascii: "\n")) {
                kept = start + newline + 1
                break search
            }
            end = start
        }
        guard ftruncate(file.descriptor, off_t(kept)) == 0 else {
            throw JSONLinesFileError("truncate the partial last line of", path: file.path, errno: errno)
        }
        // Synced now: a rotation may follow, and the rotated file must not get the partial line
        // back after a power loss.
        try file.sync()
        return kept
    }

    /// Renames `events.jsonl` to a rotated name no other file has, then deletes the oldest rotated
    /// files beyond ``maxFiles``: what the app did not collect by then is lost, on purpose (the
    /// bound on disk). A file that cannot be deleted is left for the next rotation to try again.
    private func rotate(batchID: UUID, now: Date) throws(JSONLinesFileError) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var rotated = names.filter { $0.hasPrefix(Self.rotatedPrefix) && $0.hasSuffix(Self.rotatedSuffix) }.sorted()
        // Names sort in the order of rotation, which is what the oldest are chosen by: a clock
        // that stands still (two rotations in a millisecond) or went back names the file 1 ms
        // after the newest.
        var milliseconds = max(0, Int64((now.timeIntervalSince1970 * 1000).rounded(.down)))
        if let newest = rotated.last.flatMap(Self.rotatedMilliseconds(ofName:)), newest >= milliseconds {
            milliseconds = newest + 1
        }
        let base = Self.rotatedBaseName(milliseconds: milliseconds, batchID: batchID)
        var name = base + Self.rotatedSuffix
        var suffix = 2
        while access(path(name), F_OK) == 0 {  // under the lock: no other writer renames meanwhile
            name = "\(base)-\(suffix)\(Self.rotatedSuffix)"
            suffix += 1
        }
        guard rename(currentPath, path(name)) == 0 else {
            throw JSONLinesFileError("rename \(currentPath) to", path: path(name), errno: errno)
        }
        rotated.append(name)
        for name in rotated.dropLast(max(maxFiles, 0)) {
            _ = unlink(path(name))
        }
    }

    /// `events-20261125T171648.123-1a2b3c4d`: the UTC time to the millisecond, so that names sort
    /// by age, and the batch that rotated it.
    static func rotatedBaseName(milliseconds: Int64, batchID: UUID) -> String {
        var seconds = time_t(milliseconds / 1000)
        var utc = tm()
        gmtime_r(&seconds, &utc)
        let time = String(
            format: "%04ld%02ld%02ldT%02ld%02ld%02ld.%03ld",
            Int(utc.tm_year) + 1900, Int(utc.tm_mon) + 1, Int(utc.tm_mday),
            Int(utc.tm_hour), Int(utc.tm_min), Int(utc.tm_sec), Int(milliseconds % 1000)
        )
        return "\(rotatedPrefix)\(time)-\(batchID.uuidString.prefix(8).lowercased())"
    }

    /// The time in a rotated file's name, in milliseconds since 1970; `nil` for another name.
    static func rotatedMilliseconds(ofName name: String) -> Int64? {
        // yyyyMMddTHHmmss.SSS
        let time = Array(name.utf8.dropFirst(rotatedPrefix.utf8.count).prefix(19))
        guard time.count == 19, time[8] == UInt8(ascii: "T"), time[15] == UInt8(ascii: ".") else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            time[range].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                ? Int32(String(decoding: time[range], as: UTF8.self)) : nil
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
              let minute = number(11..<13), let second = number(13..<15), let millisecond = number(16..<19) else { return nil }
        var utc = tm()
        utc.tm_year = year - 1900
        utc.tm_mon = month - 1
        utc.tm_mday = day
        utc.tm_hour = hour
        utc.tm_min = minute
        utc.tm_sec = second
        return Int64(timegm(&utc)) * 1000 + Int64(millisecond)
    }

    private func createDirectory() throws(JSONLinesFileError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw JSONLinesFileError("create the directory", path: directory.path, reason: error.localizedDescription)
        }
    }

    private func syncDirectory() throws(JSONLinesFileError) {
        let directory = try OpenFile(self.directory.path, flags: O_RDONLY)
        try directory.sync()
    }

    private func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }
}

/// A file descriptor, closed when the value is released (which also releases a `flock`).
private final class OpenFile {
    let descriptor: Int32
    let path: String
    /// Whether `open` made the file (its name is new in the directory).
    let created: Bool

    init(_ path: String, flags: Int32) throws(JSONLinesFileError) {
        self.path = path
        var descriptor: Int32 = -1
        if flags & O_CREAT != 0 {
            descriptor = Glue.open(path, flags | O_CLOEXEC | O_EXCL)
        }
        created = descriptor >= 0
        if descriptor < 0, flags & O_CREAT == 0 || errno == EEXIST {
            descriptor = Glue.open(path, flags | O_CLOEXEC)
        }
        guard descriptor >= 0 else { throw JSONLinesFileError("open", path: path, errno: errno) }
        self.descriptor = descriptor
    }

    deinit { _ = close(descriptor) }

    /// Waits for the exclusive advisory lock (other processes' and other descriptors' alike).
    func lockExclusively() throws(JSONLinesFileError) {
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw JSONLinesFileError("lock", path: path, errno: errno) }
        }
    }

    func size() throws(JSONLinesFileError) -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw JSONLinesFileError("read the size of", path: path, errno: errno) }
        return Int(info.st_size)
    }

    func byte(at offset: Int) throws(JSONLinesFileError) -> UInt8 {
        try bytes(in: offset..<(offset + 1))[0]
    }

    func bytes(in range: Range<Int>) throws(JSONLinesFileError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: range.count)
        var done = 0
        while done < range.count {
            let count = buffer.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + done, range.count - done, off_t(range.lowerBound + done))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw count == 0
                    ? JSONLinesFileError("read", path: path, reason: "it is shorter than its size")
                    : JSONLinesFileError("read", path: path, errno: errno)
            }
            done += count
        }
        return buffer
    }

    func seekToEnd(expected: Int) throws(JSONLinesFileError) {
        let offset = lseek(descriptor, 0, SEEK_END)
        guard offset >= 0 else { throw JSONLinesFileError("seek to the end of", path: path, errno: errno) }
        guard Int(offset) == expected else {  // only writers holding the lock change it
            throw JSONLinesFileError("append to", path: path, reason: "it changed size under the lock (\(expected) → \(offset) bytes)")
        }
    }

    func writeAll(_ bytes: [UInt8]) throws(JSONLinesFileError) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glue.write(descriptor, raw.baseAddress! + done, bytes.count - done)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw JSONLinesFileError("write", path: path, errno: count < 0 ? errno : EIO) }
            done += count
        }
    }

    /// Flushes the file to the storage device: `fsync`, and on Apple platforms `F_FULLFSYNC`
    /// (`fsync` there stops at the drive's cache), falling back to `fsync` where the file system
    /// does not support it, as SQLite does.
    func sync() throws(JSONLinesFileError) {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        #endif
        while fsync(descriptor) != 0 {
            guard errno == EINTR else { throw JSONLinesFileError("sync", path: path, errno: errno) }
        }
    }
}

/// The C library's `open` and `write`, named apart from members of the same name.
private enum Glue {
    static func open(_ path: String, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags, 0o644)
        #else
        Darwin.open(path, flags, 0o644)
        #endif
    }

    static func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #else
        Darwin.write(descriptor, bytes, count)
        #endif
    }
}
