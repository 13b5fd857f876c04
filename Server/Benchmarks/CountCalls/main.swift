// `nflog-count-calls CALLS MODE`: log calls for callgrind to count, under a plain symbol name
// (`nflog_bench_counted_call`) that `--toggle-collect` can name. A synchronous main: valgrind
// 3.19 crashes in `dispatch_main`, where an async main waits.
import Dispatch
import Foundation
import NFLogger

/// One log call with three parameters.
@inline(never) @_silgen_name("nflog_bench_counted_call")
func countedCall(_ logger: NFLogger, _ parameters: LogParameters) {
    logger.logEvent(name: "ui.tap", parameters: parameters, completion: nil)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let calls = Int(arguments[1]), ["active", "disabled"].contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: nflog-count-calls CALLS active|disabled\n".utf8))
    exit(2)
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-count-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
var configuration = Configuration(databaseURL: directory.appendingPathComponent("events.sqlite"), appID: "com.example.bench", appVersion: "1.0")
configuration.limits.maxPendingEvents = calls + 10_000
configuration.limits.maxPendingBytes = max(16 << 20, (calls + 10_000) * 400)
configuration.mode = arguments[2] == "disabled" ? .disabled : .active
let logger = try NFLogger(configuration: configuration)

/// Waits for a call's completion, from this synchronous main.
func wait(_ body: (@escaping @Sendable () -> Void) -> Void) {
    let done = DispatchSemaphore(value: 0)
    body { done.signal() }
    done.wait()
}

wait { done in logger.logEvent(name: "warm.up") { _ in done() } }  // the database is open
for index in 0..<1_000 { logger.logEvent(name: "ui.tap", parameters: ["screen": "home", "button": "buy", "index": index], completion: nil) }
wait { done in logger.flush { _ in done() } }
for index in 0..<calls {
    let parameters: LogParameters = ["screen": "home", "button": "buy", "index": index]  // built by the app, not counted
    countedCall(logger, parameters)
}
wait { done in logger.close { done() } }
