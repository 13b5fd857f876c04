import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error that stops a command, printed as `Error: <description>` (exit status 1), without
/// the usage text that a `ValidationError` adds: the arguments were well formed, the world was not.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The files `serve` reads at start, checked before anything is created or bound.
enum InputFile {
    /// Refuses `path`, given as `flag`, when it is missing, a directory or cannot be read:
    /// "--keys: no such file PATH". What the file holds is checked by whoever reads it.
    static func check(_ flag: String, _ path: String) throws(CommandFailure) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure("\(flag): no such file \(path)")
        }
        guard !isDirectory.boolValue else { throw CommandFailure("\(flag): \(path) is a directory, not a file") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure("\(flag): cannot read \(path) (\(String(cString: strerror(errno))))") }
        close(fd)
    }
}

/// Whether `serve` can listen on its address, found out before the database is opened, so that
/// a port in use creates nothing and says which address and what to do.
enum ListenCheck {
    /// `host:port` as a URL shows it (an IPv6 address in brackets).
    static func shown(_ host: String, _ port: Int) -> String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    /// Binds a socket to the address as the server will (SO_REUSEADDR, the first address the
    /// host resolves to) and closes it at once. Port 0 always binds: the server picks a free port.
    static func check(host: String, port: Int) throws(CommandFailure) {
        guard port != 0 else { return }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &found)
        guard resolved == 0, let address = found else {
            throw CommandFailure("cannot listen on \(shown(host, port)): \(host) does not resolve (\(String(cString: gai_strerror(resolved)))); choose another --host")
        }
        defer { freeaddrinfo(found) }
        let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, 0)
        guard fd >= 0 else { return }  // no socket to try with: the server's own bind will say
        defer { close(fd) }
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 else { return }
        throw failure(host: host, port: port, errno: errno)
    }

    static func failure(host: String, port: Int, errno code: Int32) -> CommandFailure {
        let address = shown(host, port)
        switch code {
        case EADDRINUSE:
            return CommandFailure("cannot listen on \(address): the address is in use (another process listens there); choose another --port, or --port 0 for a free one")
        case EACCES:
            return CommandFailure("cannot listen on \(address): permission denied (ports below 1024 need privileges); choose --port 1024 or above, or --port 0")
        case EADDRNOTAVAIL:
            return CommandFailure("cannot listen on \(address): \(host) is not an address of this machine; choose another --host")
        default:
            return CommandFailure("cannot listen on \(address): \(String(cString: strerror(code)))")
        }
    }
}

/// `serve`'s hold on its SQLite file: an exclusive `flock` on the database file itself, kept
/// while serving, so a second `serve` on the same file is refused rather than writing beside
/// the first (two writers would share the file safely, but two retention schedules, two
/// checkpointers and two health probes on one file are a mistake, not a setup). The kernel
/// lets go of it when the process ends, however it ends: a collector killed with -9 leaves no
/// stale lock. `report` and `export` take none: they only read, beside a running collector.
final class ServeLock {
    private let fd: Int32
    /// Whether this run created the database file (removed again if the start fails).
    let created: Bool
    let path: String

    private init(fd: Int32, created: Bool, path: String) {
        self.fd = fd
        self.created = created
        self.path = path
    }

    deinit { close(fd) }

    /// Opens `path` (creating an empty file if missing) and locks it.
    /// - Throws: naming the path when it cannot be created or written, or another process
    ///   serves it (with that process's id when the kernel says).
    static func acquire(_ path: String) throws(CommandFailure) -> ServeLock {
        var created = false
        var fd = open(path, O_RDWR | O_CLOEXEC)
        if fd < 0 && errno == ENOENT {
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 {
                created = true
            } else if errno == EEXIST {
                fd = open(path, O_RDWR | O_CLOEXEC)  // another process made it meanwhile
            } else {
                let code = errno
                let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
                switch code {
                case EACCES, EPERM, EROFS:
                    throw CommandFailure("cannot create \(path): the directory \(directory) is not writable (\(String(cString: strerror(code)))); choose a --db in a directory this user can write")
                case ENOENT:
                    throw CommandFailure("cannot create \(path): no such directory \(directory)")
                default:
                    throw CommandFailure("cannot create \(path) (\(String(cString: strerror(code))))")
                }
            }
        }
        guard fd >= 0 else {
            let code = errno
            switch code {
            case EACCES, EPERM, EROFS:
                throw CommandFailure("\(path) is read-only (\(String(cString: strerror(code)))): serve writes to its database; make it writable or choose another --db")
            case EISDIR:
                throw CommandFailure("\(path) is a directory; --db names the database file")
            default:
                throw CommandFailure("cannot open \(path) (\(String(cString: strerror(code))))")
            }
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = holderPID(of: fd).map { " (pid \($0))" } ?? ""
            close(fd)
            throw CommandFailure("\(path) is already served by another nflog-collector\(holder); stop it first, or choose another --db")
        }
        return ServeLock(fd: fd, created: created, path: path)
    }

    /// Removes the database file and SQLite's files beside it, when this run created it: a start
    /// that failed leaves nothing behind.
    func removeIfCreated() {
        guard created else { return }
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    /// The process holding a `flock` on the file `fd` is open on, from `/proc/locks` (Linux).
    private static func holderPID(of fd: Int32) -> Int32? {
        var status = stat()
        guard fstat(fd, &status) == 0,
              let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        let device = UInt64(status.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        // "1: FLOCK  ADVISORY  WRITE 7609 fe:00:16220708 0 EOF"; waiters' lines have "->".
        for line in locks.split(separator: "\n") where !line.contains("->") {
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", let pid = Int32(fields[4]) else { continue }
            let id = fields[5].split(separator: ":")
            guard id.count == 3, UInt64(id[0], radix: 16) == major, UInt64(id[1], radix: 16) == minor,
                  UInt64(id[2]) == UInt64(status.st_ino) else { continue }
            return pid
        }
        return nil
    }
}
