import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NFLogCollectorTesting
import NFLogger

extension Phases {
    /// What the aggregate phase measures for one logger: with or without the aggregate rule.
    struct AggregateSide {
        var callTimes: [UInt64] = []
        var cpuSeconds = 0.0
        var rows = 0
        var wireBytes = 0
        var requests = 0
    }

    /// The frame-time rule of the demo's policy.
    static let frameRule = #"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"perf.frame","window_s":60,"dimensions":["screen"]}]}}"#

    /// `events` `perf.frame` events (a `ms` value, one of three screens) logged by two loggers side
    /// by side, one under the aggregate rule and one without, taking turns in rounds. Per side:
    /// each call's time on the caller's thread, the process's CPU from the first call to the last
    /// commit (nothing is uploaded meanwhile), the rows stored, and then the request bytes that
    /// deliver them to a collector on 127.0.0.1.
    static func aggregate(events: Int) async throws -> (plain: AggregateSide, aggregated: AggregateSide) {
        let (collector, collectorDirectory) = try await TestCollector.startScratch()
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        var loggers: [NFLogger] = []
        var transports: [CountingTransport] = []
        for aggregated in [false, true] {
            let directory = scratchDirectory(aggregated ? "aggregated" : "plain")
            directories.append(directory)
            var configuration = configuration(directory, pending: events + 10_000)
            configuration.uploadURL = collector.eventsURL
            configuration.appKey = TestCollector.appKey
            // Nothing travels until the flush: the CPU measured is the logging and storing.
            configuration.upload.countThreshold = 10_000_000
            configuration.upload.interval = 3_600
            if aggregated { configuration.policyOptions.fallback = try Policy.parse(Data(frameRule.utf8)) }
            let transport = CountingTransport(DefaultHTTPTransport())
            configuration.network.transport = transport
            transports.append(transport)
            let logger = try NFLogger(configuration: configuration)
            _ = await logger.logEvent(name: "warm.up")
            loggers.append(logger)
        }
        let screens = ["home", "feed", "settings"]
        var sides = [AggregateSide(), AggregateSide()]
        let rounds = 5
        for round in 0..<rounds {
            for side in (round % 2 == 0 ? [0, 1] : [1, 0]) {
                let logger = loggers[side]
                let count = events / rounds
                var times = [UInt64](repeating: 0, count: count)
                let cpuStart = processCPUSeconds()
                for call in 0..<count {
                    let index = round * count + call
                    let parameters: LogParameters = ["ms": 8.0 + Double(index % 97) * 0.25, "screen": screens[index % 3]]
                    let start = nanoseconds()
                    logger.logEvent(name: "perf.frame", parameters: parameters, completion: nil)
                    times[call] = nanoseconds() - start
                }
                _ = await logger.logEvent(name: "bench.mark")  // written after every call above
                sides[side].cpuSeconds += processCPUSeconds() - cpuStart
                sides[side].callTimes += times
            }
        }
        for (side, logger) in loggers.enumerated() {
            let diagnostics = await logger.diagnostics()
            guard diagnostics.recorded == events + 1 + rounds else {
                throw BenchError("aggregate: \(diagnostics.recorded) calls recorded, not \(events + 1 + rounds)")
            }
            sides[side].rows = diagnostics.storedPointEvents + diagnostics.storedAggregates - 1 - rounds  // less the markers
            if side == 1 && diagnostics.aggregatedEvents != events {
                throw BenchError("aggregate: \(diagnostics.aggregatedEvents) of \(events) events folded")
            }
        }
        // A flush sends an aggregate once it has been open a second.
        try await Task.sleep(for: .milliseconds(1_100))
        for (side, logger) in loggers.enumerated() {
            let result = await logger.flush()
            guard result.error == nil, result.remainingEvents == 0 else {
                throw BenchError("aggregate: the flush left \(result.remainingEvents) rows (\(result.error.map { "\($0)" } ?? "no error"))")
            }
            sides[side].wireBytes = transports[side].requestBytes
            sides[side].requests = transports[side].requests
            await logger.close()
        }
        await collector.stop(removing: collectorDirectory)
        return (sides[0], sides[1])
    }
}

/// User and system CPU time of this process so far, in seconds (every thread).
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}
