import CoreMetrics
import Foundation
import Logging
import NFLogger
import NFLoggerInstrumentation
import Tracing

extension Phases {
    /// One way into the SDK whose cost on the caller's thread is measured.
    struct SourceCall {
        let key: String
        let label: String
        let call: (Int) -> Void
    }

    /// Times each automatic source's call on the caller's thread, against a direct `logEvent`
    /// carrying what the log handler would record, all into one logger, taking turns in rounds
    /// (the queue drained between rounds): median per call, in nanoseconds.
    static func instrumentation(calls: Int) async throws -> [(key: String, label: String, median: UInt64)] {
        let directory = scratchDirectory("instrumentation")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = try NFLogger(configuration: configuration(directory, pending: calls + 10_000))
        _ = await logger.logEvent(name: "warm.up")
        // A rate that never limits: the log path itself is measured, not the drops.
        let sink = NFLogSink(logger: logger, level: .info, rateLimit: LabelRateLimit(perSecond: 1e9, burst: 1e9))
        let log = Logger(label: "bench.app") { sink.makeHandler(label: $0) }
        let metrics = NFMetricsFactory(logger: logger)
        let counter = metrics.makeCounter(label: "bench.requests", dimensions: [("route", "/cart")])
        let timer = metrics.makeTimer(label: "bench.latency", dimensions: [])
        let tracer = NFLoggerTracer(logger: logger)
        let cases = [
            SourceCall(key: "direct", label: "logEvent, the same parameters (reference)") { index in
                logger.logEvent(name: "log.bench.app", type: "log",
                                parameters: ["message": "hello", "level": "info", "source": "bench", "k": "v", "i": index])
            },
            SourceCall(key: "swift_log", label: "swift-log info through NFLogHandler") { index in
                log.info("hello", metadata: ["k": "v", "i": "\(index)"])
            },
            SourceCall(key: "swift_log_below_level", label: "swift-log debug, below the level") { _ in
                log.debug("hello")
            },
            SourceCall(key: "metrics_counter", label: "swift-metrics counter increment") { _ in
                counter.increment(by: 1)
            },
            SourceCall(key: "metrics_timer", label: "swift-metrics timer record") { index in
                timer.recordNanoseconds(Int64(1_000_000 + index))
            },
            SourceCall(key: "tracing_span", label: "tracing span start + end (a root)") { _ in
                let span = tracer.startSpan("bench.op", context: .topLevel)
                span.end()
            },
        ]
        let rounds = 5
        var samples = [[UInt64]](repeating: [], count: cases.count)
        for round in 0..<rounds {
            for (index, item) in cases.enumerated() {
                var times = [UInt64](repeating: 0, count: calls / rounds)
                for call in times.indices {
                    let start = nanoseconds()
                    item.call(round * calls + call)
                    times[call] = nanoseconds() - start
                }
                samples[index] += times
                _ = await logger.flush()  // written before the next case runs
            }
        }
        await logger.close()
        return zip(cases, samples).map { item, times in (item.key, item.label, percentile(50, times.sorted())) }
    }
}
