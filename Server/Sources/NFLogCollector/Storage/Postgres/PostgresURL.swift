import Foundation
import NIOSSL
import PostgresNIO

/// A PostgreSQL connection URL (`postgres://USER@HOST:PORT/DB?sslmode=…`) read into a client
/// configuration.
///
/// The password is never part of the URL: a URL is typed on command lines and lands in shell
/// histories and `ps` output. It comes from a file (``init(_:passwordFile:environment:)``'s
/// `passwordFile`, its first line) or from `PGPASSWORD`, as libpq's tools read it.
struct PostgresURL: Sendable {
    let host: String
    let port: Int
    let user: String
    let database: String
    /// libpq's `sslmode`: disable, allow, prefer (the default, as libpq), require, verify-ca, verify-full.
    let sslMode: String
    /// `sslrootcert`: the CA file that verify-ca and verify-full trust (the system's roots otherwise).
    let rootCertificate: String?
    let password: String?

    init(_ text: String, passwordFile: String? = nil,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresStoreError) {
        guard let components = URLComponents(string: text),
              components.scheme == "postgres" || components.scheme == "postgresql",
              let host = components.host, !host.isEmpty else {
            throw PostgresStoreError.configuration("not a PostgreSQL URL (postgres://USER@HOST:PORT/DB): \(text)")
        }
        guard components.password == nil else {
            throw PostgresStoreError.configuration(
                "the URL carries a password: give it in a file (--password-file) or PGPASSWORD, never on the command line")
        }
        let database = String(components.path.drop { $0 == "/" })
        self.host = host
        self.port = components.port ?? 5432
        self.user = components.user ?? "postgres"
        self.database = database.isEmpty ? self.user : database
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        self.sslMode = query["sslmode"] ?? "prefer"
        guard ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(sslMode) else {
            throw PostgresStoreError.configuration("unknown sslmode \(sslMode)")
        }
        self.rootCertificate = query["sslrootcert"]
        if let passwordFile {
            do {
                let contents = try String(contentsOfFile: passwordFile, encoding: .utf8)
                self.password = String(contents.split(whereSeparator: \.isNewline).first ?? "")
            } catch {
                throw PostgresStoreError.configuration("cannot read the password file \(passwordFile): \(error)")
            }
        } else {
            self.password = environment["PGPASSWORD"]
        }
    }

    /// The client's configuration: TLS as libpq's sslmode means it (require encrypts without
    /// checking the certificate; verify-ca checks the chain; verify-full the host name too).
    func configuration(poolSize: Int) -> PostgresClient.Configuration {
        var tls: PostgresClient.Configuration.TLS
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        var verified = TLSConfiguration.makeClientConfiguration()
        if let rootCertificate { verified.trustRoots = .file(rootCertificate) }
        switch sslMode {
        case "disable": tls = .disable
        case "allow", "prefer": tls = .prefer(unverified)
        case "require": tls = .require(unverified)
        case "verify-ca":
            verified.certificateVerification = .noHostnameVerification
            tls = .require(verified)
        default: tls = .require(verified)
        }
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                                         database: database, tls: tls)
        configuration.options.maximumConnections = max(poolSize, 1)
        // No JIT compilation on the collector's connections: a read over events joins every day
        // partition, whose estimated cost passes the JIT thresholds, and compiling its plan
        // (hundreds of functions) took seconds where running it took milliseconds (the report's
        // funnel edges: 8 s of a 20 s report over ten million events). Nothing it runs gains from it.
        configuration.options.additionalStartupParameters = [("jit", "off")]
        // No pool keep-alive (postgres-nio's default runs `SELECT 1` on a connection idle for 30 s).
        // A keep-alive that starts as the pool is shut down (``PostgresEventStore/close()``
        // cancels its run()) can run its query on a connection the shutdown is closing; that
        // query may never complete, and run() waits for it forever: close() hung with every
        // thread idle and no session open (postgres-nio 1.33.2). An idle connection is closed
        // after the pool's idle timeout (60 s) instead of pinged, and a dead one fails the
        // lease's first query.
        configuration.options.keepAliveBehavior = nil
        return configuration
    }
}
