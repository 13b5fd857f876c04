import Dispatch
import Foundation
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing
@testable import NFLogger
import NFLogTestSupport

// Probes the race and ordering tests share.

/// Statuses in the order their completions ran, each tagged with its call's index.
final class OrderedArrivals: Sendable {
    private let arrived = Mutex<[(Int, LogStatus)]>([])
    private let log = StatusLog()

    func completion(_ index: Int) -> LogCompletion {
        { status in
            self.arrived.withLock { $0.append((index, status)) }
            self.log.append(status)
        }
    }

    func wait(for count: Int) async { await log.wait(for: count) }

    var order: [Int] { arrived.withLock { $0.map(\.0) } }

    func status(_ index: Int) -> LogStatus? { arrived.withLock { $0.first { $0.0 == index }?.1 } }
}

/// Counters any thread may bump.
final class ThreadCounters: Sendable {
    struct Values { var issued = 0, recorded = 0, disabled = 0, other = 0, afterRecorded = 0, afterRefused = 0 }
    private let values = Mutex(Values())
    func add(_ key: WritableKeyPath<Values, Int> & Sendable) { values.withLock { $0[keyPath: key] += 1 } }
    func value(_ key: KeyPath<Values, Int> & Sendable) -> Int { values.withLock { $0[keyPath: key] } }
}

final class ThreadFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { flag.load(ordering: .sequentiallyConsistent) }
}
