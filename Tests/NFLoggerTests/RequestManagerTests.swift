import Foundation
import Synchronization
import NFLogTestSupport
import Testing
@testable import NFLogger

/// The RequestManager's rules, reached directly (no facade, no uploads): drafts go in, what
/// the queue admits is committed before its completion runs, and what waits is bounded.
@Suite("RequestManager: admission, the bound on what waits, completions after the commit")
struct RequestManagerTests {
    /// A RequestManager as the logger builds it (LoggerGraph), with no output: nothing uploads.
    func requests(_ directory: TemporaryDirectory, maxPendingEvents: Int = 20_000) -> RequestManager {
        var configuration = directory.configuration()
        configuration.limits.maxPendingEvents = maxPendingEvents
        // A drain behind the test's write lock waits for it, however loaded the machine.
        configuration.limits.busyTimeout = hangLimitSeconds
        let graph = LoggerGraph(configuration: configuration, clock: SystemEventClock())
        graph.start()
        return graph.requests
    }

    func draft(_ name: String, kind: EventKind = .point) -> EventDraft {
        EventDraft(kind: kind, name: name, type: "event", wallMilliseconds: 1_750_000_000_000, monotonicNanoseconds: 1,
                   loggedWhilePending: false, link: nil)
    }

    @Test("A completion runs after its event's commit: the row is there for another connection to read")
    func completionAfterCommit() async throws {
        let directory = TemporaryDirectory()
        let requests = requests(directory)
        let seen = StatusLog()
        let rowsAtCompletion = Mutex<[Int]>([])
        for index in 0..<20 {
            _ = requests.submit(draft("row.\(index)"), parameters: ["index": index]) { status in
                let count = (try? DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM point_events WHERE name = 'row.\(index)'")) ?? -1
                rowsAtCompletion.withLock { $0.append(count) }
                seen.append(status)
            }
        }
        await seen.wait(for: 20)
        #expect(seen.statuses.allSatisfy { $0.isRecorded })
        #expect(rowsAtCompletion.withLock { $0 } == Array(repeating: 1, count: 20))
        await withCheckedContinuation { done in requests.close { done.resume() } }
    }

    @Test("Past maxPendingEvents waiting (the batch being written counts), calls are refused with backpressure, and the queue takes calls again once it drains")
    func backpressure() async throws {
        let directory = TemporaryDirectory()
        let requests = requests(directory, maxPendingEvents: 5)
        let opened = StatusLog()
        _ = requests.submit(draft("open.first"), parameters: [:], completion: opened.completion)
        await opened.wait(for: 1)  // the database exists: the lock below is on it
        let lock = try HeldWriteLock(directory.databaseURL)
        let statuses = StatusLog()
        for index in 0..<8 { _ = requests.submit(draft("held.\(index)"), parameters: [:], completion: statuses.completion) }
        // Five wait (or are being written behind the lock); the three past the bound are refused at once.
        await statuses.wait(for: 3)
        #expect(statuses.statuses.count == 3)
        #expect(statuses.statuses.allSatisfy { if case .failed(.backpressure) = $0 { true } else { false } })
        lock.release()
        await statuses.wait(for: 8)
        #expect(statuses.statuses.filter { $0.isRecorded }.count == 5)
        let after = StatusLog()
        _ = requests.submit(draft("after.drain"), parameters: [:], completion: after.completion)
        await after.wait(for: 1)
        #expect(after.statuses.first?.isRecorded == true)
        await withCheckedContinuation { done in requests.close { done.resume() } }
    }

    @Test("Events written in one transaction (many rows to a statement) are stored in the order of the calls, each with its own values")
    func oneDrainKeepsOrder() async throws {
        let directory = TemporaryDirectory()
        let requests = requests(directory)
        let opened = StatusLog()
        _ = requests.submit(draft("open.first"), parameters: [:], completion: opened.completion)
        await opened.wait(for: 1)
        // Behind the lock every call waits, so one drain writes them all: 16-row inserts, the
        // rest one by one, a span's start in between.
        let lock = try HeldWriteLock(directory.databaseURL)
        let statuses = StatusLog()
        var ids: [UUID?] = []
        for index in 0..<41 {
            if index == 20 {
                _ = requests.submit(draft("span.between", kind: .span), parameters: [:], completion: statuses.completion)
            }
            ids.append(requests.submit(draft("row.\(index)"), parameters: ["index": index], completion: statuses.completion))
        }
        lock.release()
        await statuses.wait(for: 42)
        #expect(statuses.statuses.allSatisfy { $0.isRecorded })
        let rows = try DatabaseReader(directory.databaseURL).rows("SELECT uuid, name, parameters FROM point_events WHERE name LIKE 'row.%' ORDER BY id")
        #expect(rows.map { $0["name"] as? String } == (0..<41).map { "row.\($0)" })
        #expect(rows.map { $0["parameters"] as? String } == (0..<41).map { #"{"index":\#($0)}"# })
        #expect(rows.map { ($0["uuid"] as? [UInt8]).map { bytes in bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) } } } == ids)
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM span_events WHERE name = 'span.between'") == 1)
        await withCheckedContinuation { done in requests.close { done.resume() } }
    }

    @Test("After close, calls are refused as closed and nothing is written")
    func closedRefuses() async throws {
        let directory = TemporaryDirectory()
        let requests = requests(directory)
        await withCheckedContinuation { done in requests.close { done.resume() } }
        let statuses = StatusLog()
        _ = requests.submit(draft("too.late"), parameters: [:], completion: statuses.completion)
        await statuses.wait(for: 1)
        #expect(statuses.statuses.first == .failed(.closed))
        #expect(try DatabaseReader(directory.databaseURL).int("SELECT count(*) FROM point_events WHERE name = 'too.late'") == 0)
    }
}
