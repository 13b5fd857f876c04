import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Monotonic nanoseconds, read directly (cheaper than ContinuousClock for per-call timing).
@inline(__always)
func nanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The p-th percentile (nearest rank) of a sorted array.
func percentile(_ p: Double, _ sorted: [UInt64]) -> UInt64 {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Peak resident memory of this process, in MiB: Linux's VmHWM, because getrusage's ru_maxrss
/// survives exec and would report the parent's size at fork when that was larger.
func peakRSSMegabytes() -> Double {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
       let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
       let kibibytes = Double(line.split(separator: " ").dropFirst().first ?? "") {
        return kibibytes / 1024
    }
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024  // KiB
    #else
    getrusage(RUSAGE_SELF, &usage)
    return Double(usage.ru_maxrss) / 1_048_576  // bytes on Darwin
    #endif
}

/// Resident memory of this process now, in MiB (Linux: /proc/self/statm; 0 elsewhere).
func currentRSSMegabytes() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

func fileSize(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}

func scratchDirectory(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-bench-\(name)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Prints a progress line to stderr, so stdout keeps the figures only.
func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Runs an executable built beside this one (or this one) to its end: whether it exited with 0,
/// and everything it printed to stdout.
func runChild(_ name: String? = nil, _ arguments: [String]) throws -> (succeeded: Bool, output: String) {
    let me = Bundle.main.executableURL ?? URL(fileURLWithPath: "/proc/self/exe")
    let process = Process()
    process.executableURL = name.map { me.deletingLastPathComponent().appendingPathComponent($0) } ?? me
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationReason == .exit && process.terminationStatus == 0, String(decoding: data, as: UTF8.self))
}

/// A report line's label, padded so that the figures line up.
func padded(_ label: String) -> String {
    label.padding(toLength: max(label.count + 1, 38), withPad: " ", startingAt: 0)
}
