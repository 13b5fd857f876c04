import CollectorTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests' own child processes (``ChildProcess``), started the way that does not crash with
/// hundreds of descriptors open.
@Suite("Child processes")
struct ChildProcessTests {
    @Test("With 1,500 descriptors open in the test process, a child starts, gets its pipes as standard output and error, inherits none of the rest, and reports its exit code")
    func manyDescriptorsOpen() async throws {
        let opened = (0..<1_500).map { _ in open("/dev/null", O_RDONLY) }
        defer { for fd in opened where fd >= 0 { close(fd) } }
        #expect(opened.allSatisfy { $0 >= 0 })

        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Counts the descriptors the shell itself holds open: 0, 1, 2 and the one `ls` reads.
        child.arguments = ["-c", "ls /proc/self/fd | wc -l; echo oops >&2; exit 7"]
        let output = Pipe(), errors = Pipe()
        child.standardOutput = output
        child.standardError = errors
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 <= 5)
        #expect(errorText == "oops\n")
        #expect(child.terminationReason == .exit && child.terminationStatus == 7)
        #expect(!child.isRunning)
    }

    @Test("A child ended by a signal reports the signal; one that cannot start throws")
    func signalAndMissingExecutable() async throws {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["300"]
        try child.run()
        #expect(child.isRunning)
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)

        let missing = ChildProcess()
        missing.executableURL = URL(fileURLWithPath: "/nonexistent/nflog")
        #expect(throws: SpawnError.self) { try missing.run() }
    }
}
