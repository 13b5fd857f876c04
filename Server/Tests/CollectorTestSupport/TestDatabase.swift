import Foundation
import PostgresNIO

/// A new, empty database on the PostgreSQL server of NFLOG_POSTGRES_URL, for one test: created by
/// ``create()``, removed by ``drop()``.
package struct TestDatabase: Sendable {
    /// NFLOG_POSTGRES_URL, when set and not empty.
    package static let serverURL = ProcessInfo.processInfo.environment["NFLOG_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// NFLOG_POSTGRES_URL is not set, or not a URL.
    package struct Unavailable: Error, CustomStringConvertible {
        package let description: String
    }

    package let name: String
    /// The server's URL with this database as its path.
    package let url: String

    /// Creates a database of a new name on the server.
    package static func create() async throws -> TestDatabase {
        guard let base = serverURL, var components = URLComponents(string: base) else {
            throw Unavailable(description: "NFLOG_POSTGRES_URL is not set: scripts/postgres start DIR prints a server's URL")
        }
        let name = "nflog_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        components.path = "/" + name
        guard let url = components.string else { throw Unavailable(description: "no URL for database \(name) on \(base)") }
        try await admin("CREATE DATABASE \(name)")
        return TestDatabase(name: name, url: url)
    }

    /// Drops the database, closing whatever connection is still open to it.
    package func drop() async throws {
        try await Self.admin("DROP DATABASE \(name) WITH (FORCE)")
    }

    /// Runs `body` with the URL of a new, empty database, dropped afterwards whatever happens.
    package static func with(_ body: (String) async throws -> Void) async throws {
        let database = try await create()
        do {
            try await body(database.url)
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    /// Runs one statement on the server's own database (CREATE and DROP DATABASE cannot run in
    /// the database they name).
    package static func admin(_ sql: String) async throws {
        guard let base = serverURL else { throw Unavailable(description: "NFLOG_POSTGRES_URL is not set") }
        try await withClient(base) { client in
            try await client.query(PostgresQuery(unsafeSQL: sql))
        }
    }

    /// Runs `body` with a one-connection client to `url`: trust or PGPASSWORD authentication, no
    /// TLS, as on the throwaway cluster of scripts/postgres.
    package static func withClient(_ url: String, _ body: (PostgresClient) async throws -> Void) async throws {
        guard let components = URLComponents(string: url) else { throw Unavailable(description: "not a URL: \(url)") }
        let database = String(components.path.drop { $0 == "/" })
        var configuration = PostgresClient.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"],
            database: database.isEmpty ? "postgres" : database, tls: .disable)
        configuration.options.maximumConnections = 1
        let client = PostgresClient(configuration: configuration)
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        try await body(client)
    }
}
