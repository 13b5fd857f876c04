import Foundation
import Logging
import ServiceLifecycle

/// Runs retention on a store: ``EventStore/dropEvents(receivedBefore:)`` and
/// ``EventStore/dropRollups(hoursBefore:)`` at start, then every ``Retention/interval``, for as
/// long as the collector serves.
///
/// A service of the collector's service group: a graceful shutdown stops it before the HTTP
/// server, between two of the store's bounded transactions. A failed run (the disk full, the
/// database busy past its timeout) is logged and left to the next run, never ends the server:
/// what it did not drop is older still next time, and dropped then.
struct RetentionScheduler: Service {
    let retention: Retention
    let logger: Logger
    /// The deletion: the store's `dropEvents`, or a test's stand-in.
    private let drop: @Sendable (Int64) async throws -> Int
    /// The rollups' deletion by hour: the store's `dropRollups`, or a test's stand-in.
    private let dropRollups: @Sendable (Int64) async throws -> Int
    /// The wall clock, Unix milliseconds: the clock the routes stamp `received_ms` with.
    private let now: @Sendable () -> Int64

    init(retention: Retention, store: any EventStore, logger: Logger) {
        self.init(retention: retention, logger: logger,
                  dropRollups: { hour in try await store.dropRollups(hoursBefore: hour) },
                  drop: { cutoff in try await store.dropEvents(receivedBefore: cutoff) })
    }

    init(retention: Retention, logger: Logger,
         now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
         dropRollups: @escaping @Sendable (Int64) async throws -> Int = { _ in 0 },
         drop: @escaping @Sendable (Int64) async throws -> Int) {
        self.retention = retention
        self.logger = logger
        self.now = now
        self.drop = drop
        self.dropRollups = dropRollups
    }

    /// Runs until the service group shuts down gracefully or the task is cancelled.
    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await runOnce()
                do { try await Task.sleep(for: retention.interval) } catch { return }
            }
        }
    }

    /// One deletion of events, then one of rollups, each logged; the events dropped, `nil` when
    /// that failed (logged too) or was cancelled.
    @discardableResult
    func runOnce() async -> Int? {
        let now = now()
        let dropped = await runOnce(now: now)
        await runRollups(now: now)
        return dropped
    }

    /// The rollups' deletion, logged; a failure is left to the next run.
    private func runRollups(now: Int64) async {
        let hour = retention.rollupCutoffHour(now: now)
        let hourDate = Date(timeIntervalSince1970: Double(hour) * 3_600).ISO8601Format()
        do {
            let rows = try await dropRollups(hour)
            logger.info("retention: dropped \(rows) rollup rows of hours before \(hourDate) (\(retention.rollupDays) days)",
                        metadata: ["rollup_rows": "\(rows)", "cutoff_hour": "\(hour)"])
        } catch is CancellationError {
            logger.info("retention: stopped by shutdown; the rest of the rollups go at the next start")
        } catch {
            logger.error("retention: dropping rollups of hours before \(hourDate) failed, retried at the next run: \(error)",
                         metadata: ["cutoff_hour": "\(hour)"])
        }
    }

    private func runOnce(now: Int64) async -> Int? {
        let cutoff = retention.cutoff(now: now)
        let cutoffDate = Date(timeIntervalSince1970: Double(cutoff) / 1000).ISO8601Format()
        let started = ContinuousClock.now
        do {
            let dropped = try await drop(cutoff)
            logger.info("retention: dropped \(dropped) events received before \(cutoffDate) (\(retention.days) days)",
                        metadata: ["dropped": "\(dropped)", "cutoff_ms": "\(cutoff)",
                                   "took": "\(ContinuousClock.now - started)"])
            return dropped
        } catch is CancellationError {
            logger.info("retention: stopped by shutdown; the rest is dropped at the next start")
            return nil
        } catch {
            logger.error("retention: dropping events received before \(cutoffDate) failed, retried at the next run: \(error)",
                         metadata: ["cutoff_ms": "\(cutoff)"])
            return nil
        }
    }
}
