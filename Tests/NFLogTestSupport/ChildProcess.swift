import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process with the part of Foundation's `Process` interface the tests use, started with
/// `posix_spawn` directly.
///
/// Why not `Process`: on Linux, Swift 6.3.1's `Process.run()` lists `/proc/self/fd` by copying
/// each `dirent`'s whole 256-byte name field, reading past the end of glibc's directory buffer;
/// with enough descriptors open (this suite holds hundreds of sockets at once) that read can
/// reach an unmapped page and the test process dies of SIGSEGV (a clean-clone CI run did, in
/// `Process.run`). Fixed upstream in swift-corelibs-foundation #5472, not in this toolchain.
/// Here the child closes every descriptor above 2 itself (`posix_spawn_file_actions_addclosefrom_np`),
/// so nothing lists the directory. swift-subprocess would serve too, but only through a scoped
/// API that every test keeping a collector or a crashing app alive would have to be rebuilt around.
///
/// Standard input, output and error are each a `Pipe` (the child gets its end; the parent's copy
/// of that end is closed after the start, as `Process` does), a `FileHandle`, or nil (the test
/// process's own).
public final class ChildProcess: @unchecked Sendable {
    // Invariant: the configuration properties are set before `run()` and only read by it, on the
    // caller's thread; what changes afterwards (the exit) lives in `state`, behind its mutex.
    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's whole environment; nil: the test process's.
    public var environment: [String: String]?
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?
    public private(set) var processIdentifier: pid_t = 0

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc module does
    /// not import (it is declared only for `_GNU_SOURCE`); looked up by name.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    private struct State { var started = false; var status: Int32? }
    private let state = Mutex(State())

    public init() {}

    /// Starts the child. Throws if the executable cannot be started.
    public func run() throws {
        guard let path = executableURL?.path else { throw SpawnError("no executable set") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentCopies: [FileHandle] = []
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            switch stream {
            case let pipe as Pipe:
                let childEnd = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, childEnd.fileDescriptor, target)
                parentCopies.append(childEnd)
            case let handle as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            default:
                break
            }
        }
        guard let closeFrom = Self.addCloseFrom else { throw SpawnError("needs glibc 2.34 or later (posix_spawn_file_actions_addclosefrom_np)") }
        guard closeFrom(&actions, 3) == 0 else { throw SpawnError("cannot ask the child to close inherited descriptors") }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A process group of its own, as `Process` does: a Ctrl-C at the terminal reaches the
        // test runner, which ends its children itself.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }

        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError("cannot start \(path): \(String(cString: strerror(result)))") }
        processIdentifier = pid
        state.withLock { $0.started = true }
        for handle in parentCopies { try? handle.close() }
    }

    /// Whether the child has not ended yet (false before `run()`).
    public var isRunning: Bool {
        state.withLock { state in
            guard state.started, state.status == nil else { return false }
            var status: Int32 = 0
            if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier { state.status = status }
            return state.status == nil
        }
    }

    /// Blocks the calling thread until the child ends.
    public func waitUntilExit() {
        while true {
            let done = state.withLock { !$0.started || $0.status != nil }
            if done { return }
            var status: Int32 = 0
            let result = waitpid(processIdentifier, &status, 0)
            if result == processIdentifier {
                state.withLock { if $0.status == nil { $0.status = status } }
                return
            }
            // EINTR, or `isRunning` reaped it on another thread and is recording the status.
            usleep(1_000)
        }
    }

    /// Its exit code, or the number of the signal that ended it (as `Process`); 0 while running.
    public var terminationStatus: Int32 {
        guard let status = state.withLock({ $0.status }) else { return 0 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// How the child ended, as `Process.TerminationReason`; `.exit` while running.
    public var terminationReason: TerminationReason {
        guard let status = state.withLock({ $0.status }) else { return .exit }
        return status & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// How a child ended: it exited, or a signal ended it.
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    /// Sends SIGTERM.
    public func terminate() {
        guard state.withLock({ $0.started }) else { return }
        kill(processIdentifier, SIGTERM)
    }
}

/// Why a ``ChildProcess`` did not start.
public struct SpawnError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
