import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NFLogger
import Synchronization

/// A live status line on stderr while the demo logs and uploads: a bar redrawn in place on a
/// terminal, a line per quarter otherwise (so logs of CI runs stay short).
final class StatusLine: Sendable {
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private let state = Mutex<(phase: String, done: Int, total: Int, lastQuarter: Int, detail: String)>(("", 0, 1, -1, ""))
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(logger: NFLogger, tally: Tally) {
        let running = Task { [self] in
            while !Task.isCancelled {
                let diagnostics = await logger.diagnostics()
                let counts = tally.counts
                let detail = "recorded \(counts.recorded) · filtered \(counts.filteredTotal) · uploaded \(diagnostics.uploadedEvents) · waiting \(diagnostics.waitingForUpload)\(diagnostics.lastUploadError.map { " · \($0)" } ?? "")"
                draw(detail: detail)
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        task.withLock { $0 = running }
    }

    func update(phase: String, done: Int, total: Int) {
        state.withLock { ($0.phase, $0.done, $0.total) = (phase, done, max(total, 1)) }
    }

    private func draw(detail: String) {
        let line = state.withLock { state -> String? in
            state.detail = detail
            let fraction = min(1, Double(state.done) / Double(state.total))
            let quarter = Int(fraction * 4)
            if !isTerminal {
                guard quarter > state.lastQuarter else { return nil }
                state.lastQuarter = quarter
                return "\(state.phase) \(Int(fraction * 100))% · \(detail)\n"
            }
            let width = 24
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            return "\r\u{1B}[2K\(bar) \(Int(fraction * 100))% \(state.phase) · \(detail)"
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = await running?.value
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}
