import Foundation
import Logging
import NFLogCollector
import NFLogCollectorTesting

/// A fresh store of one kind, and how to remove it once closed.
package struct TestStore: Sendable {
    package let store: any EventStore
    /// Removes the store's file or database; run after the store is closed.
    package let remove: @Sendable () async -> Void
}

extension StoreKind {
    /// A new, empty store of this kind: a SQLite file in the temporary directory, or a PostgreSQL
    /// database of its own. Close it, then call its `remove`. SQLite does not fsync each commit
    /// (a test's store need not survive a power cut), as ``TestCollector``.
    /// - Parameter readTimeLimit: how long one read may run (on PostgreSQL, each statement of a read).
    package func makeStore(readTimeLimit: Duration = .seconds(30)) async throws -> TestStore {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-test-\(UUID().uuidString).sqlite").path
            let store = try SQLiteEventStore(path: path, durableCommits: false, readTimeLimit: readTimeLimit)
            return TestStore(store: store) {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        case .postgres:
            let database = try await TestDatabase.create()
            let remove: @Sendable () async -> Void = {
                do {
                    try await database.drop()
                } catch {
                    // Left on a throwaway server: worth a line, not a failed test.
                    FileHandle.standardError.write(Data("could not drop test database \(database.name): \(error)\n".utf8))
                }
            }
            do {
                return TestStore(store: try await PostgresEventStore(url: database.url, poolSize: 4, readTimeLimit: readTimeLimit), remove: remove)
            } catch {
                await remove()
                throw error
            }
        }
    }

    /// Runs `body` with a new, empty store of this kind; closes and removes it afterwards,
    /// whatever happens (closing a store twice is harmless, so `body` may close it itself).
    package func withStore(readTimeLimit: Duration = .seconds(30), _ body: (any EventStore) async throws -> Void) async throws {
        let made = try await makeStore(readTimeLimit: readTimeLimit)
        do {
            try await body(made.store)
        } catch {
            await made.store.close()
            await made.remove()
            throw error
        }
        await made.store.close()
        await made.remove()
    }

    /// A collector on 127.0.0.1 over a new, empty store of this kind (development mode unless
    /// `configuration` has keys, as ``TestCollector``); its `stop()` closes and removes the store.
    package func startCollector(configuration: CollectorConfiguration = CollectorConfiguration(), logger: Logger? = nil,
                                readTimeLimit: Duration = .seconds(30)) async throws -> RunningCollector {
        let made = try await makeStore(readTimeLimit: readTimeLimit)
        return try await RunningCollector.start(store: made.store, configuration: configuration, logger: logger, afterStop: made.remove)
    }
}
