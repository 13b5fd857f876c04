// `nflog-count-calls CALLS MODE`: log calls for callgrind to count. A synchronous main: valgrind
// 3.19 crashes in `dispatch_main`, where an async main waits.
//
// Modes:
// - `active`, `disabled`: the call with parameters the app built beforehand, under a plain symbol
//   name (`nflog_bench_counted_call`) that `--toggle-collect` can name: the caller's thread only.
// - `app`: the call as apps write it, literal parameters and a completion handler, under
//   `nflog_bench_app_call`: the caller's thread only.
// - `whole-active`, `whole-disabled`: CALLS calls as apps write them, every completion awaited
//   (each event committed; nothing uploaded: no collector is configured), then closed. Counted
//   whole (every thread, from start to exit); the same run with CALLS = 0 is the program's fixed
//   cost, which the benchmark subtracts.
// - `whole-deliver`: `whole-active`, then every event uploaded (`flush`) to the collector at
//   `NFLOG_COUNT_COLLECTOR` (with the key in `NFLOG_COUNT_KEY`), which runs in another process,
//   so only the app's side of delivery is counted. Less `whole-active`: what delivery costs.
// - `whole-disabled-queued`: `whole-disabled` with the completion queue (the configuration's)
//   held until the loop ends, as the main queue is while a loop on it runs: the completions wait
//   and run in one hop, so the count is the same from run to run; with an idle completion thread,
//   how often it wakes depends on the scheduler (valgrind's too).
// - `whole-harness`: the same loop with the logger's call replaced by a function that runs the
//   completion at once: what the app's side of each call costs (its literal, its closure).
// - `decode`: CALLS is batches: a batch of 1,000 events parsed and checked by the collector's
//   decoder CALLS times (Decode.swift), no logger.
// - `idle`: CALLS is seconds. A logger with an upload URL (a port nothing listens on) and
//   nothing stored starts, is left alone that long, and closes: what an idle logger costs is
//   this run less the same with 0 seconds.
import Dispatch
import Foundation
import NFLogger
import Synchronization

/// One log call with three parameters.
@inline(never) @_silgen_name("nflog_bench_counted_call")
func countedCall(_ logger: NFLogger, _ parameters: LogParameters) {
    logger.logEvent(name: "ui.tap", parameters: parameters, completion: nil)
}

/// One log call as an app writes it: the parameters a literal, a completion handler.
@inline(never) @_silgen_name("nflog_bench_app_call")
func appCall(_ logger: NFLogger, _ index: Int, _ done: Completions) {
    logger.logEvent(name: "ui.tap", parameters: ["screen": "home", "button": "buy", "index": index]) { _ in done.one() }
}

/// The app's side of `appCall` alone: the same literal and closure, handed to a function the
/// optimizer cannot see (`sink`, set at run time), which runs the completion at once.
@inline(never) @_silgen_name("nflog_bench_harness_call")
func harnessCall(_ index: Int, _ done: Completions) {
    sink("ui.tap", ["screen": "home", "button": "buy", "index": index]) { _ in done.one() }
}

/// What `harnessCall` hands its literal and closure to, in the shape of `logEvent` (an optional
/// escaping completion), assigned in main: a call the optimizer could see into was specialized
/// for the one closure, whose context then lived on the stack, and what the app's closure costs
/// (allocated by the call, freed once it has run) was counted as the SDK's.
nonisolated(unsafe) var sink: (String, LogParameters, LogCompletion?) -> Void = { _, _, _ in }

@inline(never)
func swallow(_ name: String, _ parameters: LogParameters, _ completion: LogCompletion?) {
    completion?(.disabled)
}

/// Counts completions; `wait()` returns once `expected` have run.
final class Completions: Sendable {
    private let count = Atomic<Int>(0)
    private let expected: Int
    private let allDone = DispatchSemaphore(value: 0)
    init(expected: Int) { self.expected = expected }
    func one() {
        if count.add(1, ordering: .relaxed).newValue == expected { allDone.signal() }
    }
    func wait() { if expected > 0 { allDone.wait() } }
}

let modes = ["active", "disabled", "app", "whole-active", "whole-disabled", "whole-disabled-queued", "whole-deliver", "whole-harness", "idle", "decode"]
let arguments = CommandLine.arguments
guard arguments.count == 3, let calls = Int(arguments[1]), calls >= 0, modes.contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: nflog-count-calls CALLS \(modes.joined(separator: "|"))\n".utf8))
    exit(2)
}
let mode = arguments[2]
if mode == "decode" {
    try Decode.run(batches: calls)
    exit(0)
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-count-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
var configuration = Configuration(databaseURL: directory.appendingPathComponent("events.sqlite"), appID: "com.example.bench", appVersion: "1.0")
configuration.limits.maxPendingEvents = calls + 10_000
configuration.limits.maxPendingBytes = max(16 << 20, (calls + 10_000) * 400)
configuration.mode = mode.contains("disabled") ? .disabled : .active
/// The app's queue for completions in `whole-disabled-queued`, held through the loop.
let completionQueue = DispatchQueue(label: "nflog-count-calls.completions")
if mode == "whole-disabled-queued" { configuration.completionQueue = completionQueue }
if mode == "idle" {
    configuration.uploadURL = URL(string: "http://127.0.0.1:9/v1/events")
    configuration.appKey = "idle-key"
}
if mode == "whole-deliver" {
    let environment = ProcessInfo.processInfo.environment
    guard let collector = environment["NFLOG_COUNT_COLLECTOR"].flatMap(URL.init(string:)), let key = environment["NFLOG_COUNT_KEY"] else {
        FileHandle.standardError.write(Data("whole-deliver needs NFLOG_COUNT_COLLECTOR (the events URL) and NFLOG_COUNT_KEY\n".utf8))
        exit(2)
    }
    configuration.uploadURL = collector
    configuration.appKey = key
}
let logger = try NFLogger(configuration: configuration)

/// Waits for a call's completion, from this synchronous main.
func wait(_ body: (@escaping @Sendable () -> Void) -> Void) {
    let done = DispatchSemaphore(value: 0)
    body { done.signal() }
    done.wait()
}

if mode == "idle" {
    wait { done in logger.flush { _ in done() } }  // started: the database open, nothing to send
    Thread.sleep(forTimeInterval: TimeInterval(calls))
    wait { done in logger.close { done() } }
    exit(0)
}
wait { done in logger.logEvent(name: "warm.up") { _ in done() } }  // the database is open
for index in 0..<1_000 { logger.logEvent(name: "ui.tap", parameters: ["screen": "home", "button": "buy", "index": index], completion: nil) }
wait { done in logger.flush { _ in done() } }
switch mode {
case "active", "disabled":
    for index in 0..<calls {
        let parameters: LogParameters = ["screen": "home", "button": "buy", "index": index]  // built by the app, not counted
        countedCall(logger, parameters)
    }
case "whole-harness":
    sink = swallow
    let completions = Completions(expected: calls)
    for index in 0..<calls { harnessCall(index, completions) }
    completions.wait()
case "whole-disabled-queued":
    let completions = Completions(expected: calls)
    completionQueue.suspend()
    for index in 0..<calls { appCall(logger, index, completions) }
    completionQueue.resume()
    completions.wait()
default:
    let completions = Completions(expected: calls)
    for index in 0..<calls { appCall(logger, index, completions) }
    completions.wait()
}
if mode == "whole-deliver" {
    let delivered = Atomic<Bool>(false)
    for _ in 0..<100 where !delivered.load(ordering: .relaxed) {  // a flush stops at a failure; the collector is local
        wait { done in
            logger.flush { result in
                if let error = result.error { FileHandle.standardError.write(Data("flush: \(error)\n".utf8)) }
                delivered.store(result.remainingEvents == 0, ordering: .relaxed)
                done()
            }
        }
    }
    guard delivered.load(ordering: .relaxed) else {
        FileHandle.standardError.write(Data("whole-deliver: events still stored after 100 flushes\n".utf8))
        exit(1)
    }
}
wait { done in logger.close { done() } }
