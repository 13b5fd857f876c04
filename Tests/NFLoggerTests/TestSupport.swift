import Foundation
import Synchronization
import Testing
@testable import NFLogger
@_spi(NFLogShared) import NFLogSupport
import NFLogTestSupport

extension TemporaryDirectory {
    /// An SDK configuration for a database in this directory.
    func configuration(mode: LogMode = .active) -> Configuration {
        var configuration = Configuration(databaseURL: databaseURL, appID: "com.example.tests", appVersion: "1.0.0")
        configuration.mode = mode
        return configuration
    }
}

/// Reads the database with plain SQL, through a connection of its own, as an outside observer would.
struct DatabaseReader {
    let connection: SQLiteConnection

    init(_ url: URL) throws {
        connection = try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: 5_000)
    }

    func int(_ sql: String) throws -> Int { Int(try connection.scalarInt(sql)) }

    /// Every row of `sql` as column name → value (Int64, String, [UInt8] or nil).
    func rows(_ sql: String) throws -> [[String: Any?]] {
        let statement = try connection.prepare(sql)
        var rows: [[String: Any?]] = []
        let columns = sqlite3ColumnNames(statement)
        while try statement.step() {
            var row: [String: Any?] = [:]
            for (index, name) in columns.enumerated() {
                let column = Int32(index)
                switch sqlite3ColumnType(statement, column) {
                case .null: row[name] = .some(nil)
                case .integer: row[name] = statement.int64(at: column)
                case .text: row[name] = statement.text(at: column)
                case .blob: row[name] = statement.blob(at: column)
                }
            }
            rows.append(row)
        }
        return rows
    }
}

/// A clock the test moves by hand.
final class ManualClock: EventClock {
    private let now = Mutex<(wall: Int64, mono: UInt64)>((1_750_000_000_000, 1_000_000_000))

    func wallMilliseconds() -> Int64 { now.withLock { $0.wall } }
    func monotonicNanoseconds() -> UInt64 { now.withLock { $0.mono } }

    /// Moves both clocks on by `seconds`.
    func advance(_ seconds: TimeInterval) {
        now.withLock {
            $0.wall += seconds.milliseconds
            $0.mono += seconds.nanoseconds
        }
    }
}

extension LogStatus {
    var recordedID: UUID? {
        if case .recorded(let id) = self { return id }
        return nil
    }

    var failure: NFLoggerError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

extension UUID {
    var bytes: [UInt8] { withBytes { Array($0) } }
}

/// Parses stored JSON text.
func jsonObject(_ text: Any??) throws -> [String: Any] {
    guard case let text as String = text ?? nil else { return [:] }
    return try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

/// A clock the test moves by hand whose scheduled work (the logger's timers) runs when the test
/// moves time past it, on the queue it was scheduled on; it counts what it ran.
final class TimerClock: EventClock {
    private struct Scheduled {
        let id: Int
        let due: UInt64
        let queue: DispatchQueue
        let handler: @Sendable () -> Void
    }
    private struct State {
        var wall: Int64 = 1_750_000_000_000
        var mono: UInt64 = 1_000_000_000
        var nextID = 0
        var scheduled: [Scheduled] = []
        var fired = 0
    }
    private let state = Mutex(State())

    func wallMilliseconds() -> Int64 { state.withLock { $0.wall } }
    func monotonicNanoseconds() -> UInt64 { state.withLock { $0.mono } }

    func schedule(after nanoseconds: UInt64, leeway: DispatchTimeInterval, on queue: DispatchQueue,
                  _ handler: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let id = state.withLock { state in
            state.nextID += 1
            state.scheduled.append(Scheduled(id: state.nextID, due: state.mono &+ nanoseconds, queue: queue, handler: handler))
            return state.nextID
        }
        return Work(clock: self, id: id)
    }

    /// Moves both clocks on by `seconds`, and runs (on their queues) the work that came due.
    func advance(_ seconds: TimeInterval) {
        let due = state.withLock { state in
            state.wall += seconds.milliseconds
            state.mono += seconds.nanoseconds
            let now = state.mono
            let due = state.scheduled.filter { $0.due <= now }.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
            state.scheduled.removeAll { $0.due <= now }
            state.fired += due.count
            return due
        }
        for work in due { work.queue.async(execute: work.handler) }
    }

    /// Work scheduled and not yet run or cancelled.
    var armed: Int { state.withLock { $0.scheduled.count } }
    /// Work run so far.
    var fired: Int { state.withLock { $0.fired } }

    private struct Work: ScheduledWork {
        let clock: TimerClock
        let id: Int
        func cancel() { clock.state.withLock { $0.scheduled.removeAll { $0.id == id } } }
    }
}

extension NFLogger {
    /// The statements the logger's connection has run, read on its queue after everything the
    /// clock has let run there so far.
    func statementsRun() async -> Int {
        await withCheckedContinuation { done in
            requests.afterPendingWrites { database, _ in done.resume(returning: database.statementsRun) }
        }
    }
}

extension TimerClock {
    /// Moves the clock on `minutes` in steps of 10 s, each step's work run on `logger`'s queue
    /// before the next.
    func idle(_ logger: NFLogger, minutes: Int) async {
        for _ in 0..<(minutes * 6) {
            advance(10)
            _ = await logger.statementsRun()
        }
    }
}

/// A database made by an older SDK: the schema up to `version`, one context and one session (both
/// row id 1) started at `now`; the caller adds what that SDK had stored.
func olderDatabase(at url: URL, version: Int32, now: Int64) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: 1_000)
    try Schema.migrate(connection, upTo: version)
    try connection.execute("""
        INSERT INTO contexts (id, properties) VALUES (1, '{"app_id":"a","app_version":"1","locale":"en","os_name":"Linux","os_version":"6","sdk_name":"NFLogger","sdk_version":"0.0.1"}');
        INSERT INTO sessions (id, uuid, context_id, started_ms) VALUES (1, randomblob(16), 1, \(now));
        """)
    return connection
}

