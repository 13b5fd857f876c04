/// The stores the collector runs on, as a test's argument: `@Test(arguments: StoreKind.all)`
/// runs a test once on each (``makeStore(readTimeLimit:)``,
/// ``startCollector(configuration:logger:readTimeLimit:)``).
package enum StoreKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A new SQLite file (`SQLiteEventStore`).
    case sqlite
    /// A new database on the PostgreSQL server of NFLOG_POSTGRES_URL (`PostgresEventStore`).
    case postgres

    /// SQLite, and PostgreSQL when NFLOG_POSTGRES_URL names a server (`scripts/postgres start DIR`
    /// prints one; .ci/run exports it). Without it the tests run on SQLite alone.
    package static let all: [StoreKind] = TestDatabase.serverURL == nil ? [.sqlite] : [.sqlite, .postgres]

    package var description: String { rawValue }
}
