import ArgumentParser
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NFLogCollector
import Synchronization

@main
struct CollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nflog-collector",
        abstract: "The NFLogger collector: receives gzip batches of events, stores each event once, reports.",
        subcommands: [Serve.self, Export.self, Report.self, Keygen.self, TLSCert.self])
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the collector's HTTP API. The first line printed is the base URL (\"listening on http://…\").")

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port: Int = 8080

    @OptionGroup var storage: StoreOptions

    @Option(help: "A JSON file of accepted app keys, as SHA-256: {\"keys\": [{\"app\": \"…\", \"key_sha256\": \"…\"}]} (keygen --app APP --keys FILE adds one). Without it: development mode, key dev-key, loopback only.")
    var keys: String?

    @Option(help: "A JSON file of accepted read tokens, as SHA-256, each for one app, a list, or every app: {\"tokens\": [{\"apps\": [\"…\"] or \"*\", \"token_sha256\": \"…\"}]} (keygen --read-token APP --read-tokens FILE adds one). They read stats, reports, lookups and exports (Authorization: Bearer); app keys cannot. Without it: only dev-read-token (app dev) in development mode, none otherwise.")
    var readTokens: String?

    @Option(help: "Requests per second allowed per app key (all its devices together), past which the collector answers 429 with Retry-After. 0: no limit.")
    var rateLimit: Double = 100

    @Option(help: "Requests one app key may make at once after a quiet period (default: two seconds' worth of --rate-limit).")
    var rateBurst: Int?

    @Option(help: "The address to bind.")
    var host: String = "127.0.0.1"

    @Option(help: "Serve policies from this directory: <app>.json, else default.json (read per request).")
    var policies: String?

    @Option(help: "Sign served policies with this Ed25519 private key (base64 of 32 bytes, as keygen writes it).")
    var policySigningKey: String?

    @Option(help: "Serve HTTPS with this PEM certificate (chain, leaf first). Needs --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "Connections open at once; past it a new one is closed at once (logged once a minute). Default: the descriptor limit (raised to its hard maximum at start) less 256.")
    var maxConnections: Int?

    @Option(help: "Seconds a connection may go without a complete request head, from when it opened or the previous answer (idle and slow heads alike).")
    var requestHeadTimeoutS: Double = 30

    @Option(help: "The slowest body accepted, in bytes per second, judged window by window: the first --body-grace-s of a body, and each --body-rate-window-s after it, must bring this rate times the window, or the rest of the body; a body that falls short is closed.")
    var minBodyRate: Int = 16 * 1024

    @Option(help: "Seconds of each window a body's rate is judged over (see --min-body-rate).")
    var bodyRateWindowS: Double = 10

    @Option(help: "Seconds of a body's first window (see --min-body-rate): room for a slow start.")
    var bodyGraceS: Double = 10

    @Option(help: "Bytes of request bodies held in memory at once, over all connections, counted as they arrive (not as declared). When short, the slowest uploads are closed to make room; when none is slow, an upload waits 0.2 s, then gets 503 with Retry-After and the connection closes.")
    var maxInflightBytes: Int = 64 * 1024 * 1024

    @Option(help: "Uploads one client address (an IPv4 address, an IPv6 /64) may have in progress at once; past it a slow one of its own is closed, or the new one gets 429 with Retry-After.")
    var maxUploadsPerClient: Int = 16

    @Option(help: "Bytes of upload bodies one client address may hold in memory at once; past it as for --max-uploads-per-client. Default: an eighth of --max-inflight-bytes.")
    var maxInflightBytesPerClient: Int?

    @Option(help: ArgumentHelp("A reverse proxy (an address, or a block such as 10.0.0.0/8) whose X-Forwarded-For names the client for the per-client limits; repeat for several. Without it the connection's peer address is the client.", valueName: "CIDR"))
    var trustedProxy: [String] = []

    /// The `report` and `export` commands: an operator's own read of the file, as long as it takes.
    static let unlimitedReads = Duration.seconds(Int64.max)

    @Option(help: "Seconds one read may run (a report, a lookup, an export page) before it is stopped with 503 and Retry-After; uploads are never held up by reads.")
    var readTimeoutS: Double = 30

    @Option(help: "Keep events this many days (1 to 36500), by when the collector received them: older events and aggregates are dropped at start and then every hour, counted in stats as events_expired and aggregates_expired. Default: kept forever.")
    var retentionDays: Int?

    @Option(help: "Keep the hourly rollups the report reads this many days (from --retention-days to 36500), by the hour of the devices' clocks: older hours are dropped with the events. Default: 400, or --retention-days if more. Needs --retention-days.")
    var rollupRetentionDays: Int?

    /// The retention the flags ask for, if any.
    func retention() throws(CollectorError) -> Retention? {
        try retentionDays.map { days throws(CollectorError) in try Retention(days: days, rollupDays: rollupRetentionDays) }
    }

    func validate() throws {
        guard readTimeoutS.isFinite, readTimeoutS > 0, readTimeoutS <= 3_600 else {
            throw ValidationError("--read-timeout-s must be more than 0 and at most 3600")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard rateLimit.isFinite, rateLimit >= 0 else { throw ValidationError("--rate-limit must be 0 (no limit) or more") }
        guard rateBurst.map({ $0 >= 1 }) ?? true else { throw ValidationError("--rate-burst must be at least 1") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        guard maxConnections.map({ $0 >= 1 }) ?? true else { throw ValidationError("--max-connections must be at least 1") }
        guard requestHeadTimeoutS.isFinite, requestHeadTimeoutS > 0, requestHeadTimeoutS <= 3_600 else {
            throw ValidationError("--request-head-timeout-s must be more than 0 and at most 3600")
        }
        guard minBodyRate >= 1 else { throw ValidationError("--min-body-rate must be at least 1 byte per second") }
        guard maxInflightBytes >= 1 << 20 else { throw ValidationError("--max-inflight-bytes must be at least 1048576 (1 MiB)") }
        for (flag, seconds) in [("--body-rate-window-s", bodyRateWindowS), ("--body-grace-s", bodyGraceS)] {
            guard seconds.isFinite, seconds >= 0.1, seconds <= 3_600 else { throw ValidationError("\(flag) must be at least 0.1 and at most 3600") }
        }
        guard maxUploadsPerClient >= 1 else { throw ValidationError("--max-uploads-per-client must be at least 1") }
        guard maxInflightBytesPerClient.map({ $0 >= 64 * 1024 }) ?? true else {
            throw ValidationError("--max-inflight-bytes-per-client must be at least 65536 (64 KiB, one piece of a body)")
        }
        do { _ = try TrustedProxies(trustedProxy) } catch { throw ValidationError(error.description) }
        if rollupRetentionDays != nil, retentionDays == nil {
            throw ValidationError("--rollup-retention-days needs --retention-days: without it every event and rollup is kept")
        }
        do { _ = try retention() } catch { throw ValidationError(error.description) }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        // Every file first, then the address: a mistake in either creates nothing.
        for (flag, path) in [("--keys", keys), ("--read-tokens", readTokens), ("--policy-signing-key", policySigningKey),
                             ("--tls-cert", tlsCert), ("--tls-key", tlsKey), ("--password-file", storage.passwordFile)] {
            if let path { try InputFile.check(flag, path) }
        }
        var configuration = CollectorConfiguration()
        configuration.host = host
        configuration.port = port
        ConnectionLimits.raiseDescriptorLimit()
        configuration.connections.maxConnections = maxConnections ?? ConnectionLimits.defaultMaxConnections
        configuration.connections.requestHeadTimeout = .milliseconds(Int64(requestHeadTimeoutS * 1_000))
        configuration.connections.minBodyBytesPerSecond = minBodyRate
        configuration.connections.bodyRateWindow = .milliseconds(Int64(bodyRateWindowS * 1_000))
        configuration.connections.bodyGrace = .milliseconds(Int64(bodyGraceS * 1_000))
        configuration.maxInflightBodyBytes = maxInflightBytes
        configuration.maxUploadsPerClient = maxUploadsPerClient
        configuration.maxInflightBytesPerClient = maxInflightBytesPerClient
        configuration.trustedProxies = try TrustedProxies(trustedProxy)
        configuration.retention = try retention()
        if rateLimit > 0 {
            configuration.rateLimit = try RateLimit(requestsPerSecond: rateLimit, burst: rateBurst)
        }
        if let readTokens {
            do { configuration.readTokens = try ReadTokens(contentsOf: URL(fileURLWithPath: readTokens)) } catch {
                throw CommandFailure("--read-tokens: \(error)")
            }
        } else if keys != nil {
            configuration.readTokens = .none
            FileHandle.standardError.write(Data("note: no --read-tokens file: stats, reports, lookups and exports cannot be read over HTTP (nflog-collector report/export --db read the file)\n".utf8))
        }
        if let keys {
            do { configuration.keys = try AppKeys(contentsOf: URL(fileURLWithPath: keys)) } catch { throw CommandFailure("--keys: \(error)") }
            // Still accepted, so an upgrade does not lock out every app; but the file holds keys that upload.
            for entry in configuration.keys.plaintextEntries {
                FileHandle.standardError.write(Data("""
                    warning: \(keys): keys[\(entry.index)] (app \(entry.app)) holds its key in plaintext; anyone who reads the file can upload as that app. Replace its "key" field with "key_sha256": "\(entry.keySHA256)".

                    """.utf8))
            }
        } else {
            FileHandle.standardError.write(Data("""
                ************************************************************************
                * DEVELOPMENT MODE: no --keys file. The only accepted app key is       *
                * "dev-key", and the collector listens on loopback only.               *
                ************************************************************************

                """.utf8))
        }
        if configuration.readTokens.isDevelopment {
            FileHandle.standardError.write(Data("""
                ************************************************************************
                * DEVELOPMENT READ TOKEN: no --read-tokens file. Anyone on this        *
                * machine reads app "dev" with "Authorization: Bearer dev-read-token". *
                ************************************************************************

                """.utf8))
        }
        if let policies {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: policies, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CommandFailure(FileManager.default.fileExists(atPath: policies)
                    ? "--policies: \(policies) is not a directory" : "--policies: no such directory \(policies)")
            }
            configuration.policiesDirectory = URL(fileURLWithPath: policies, isDirectory: true)
        }
        if let policySigningKey {
            do { configuration.policySigningKey = try Keygen.readPrivateKey(policySigningKey) } catch {
                throw CommandFailure("--policy-signing-key: \(error)")
            }
        }
        if let tlsCert, let tlsKey {
            do throws(CollectorTLSError) {
                configuration.tls = try CollectorTLS(certificateFile: URL(fileURLWithPath: tlsCert), privateKeyFile: URL(fileURLWithPath: tlsKey))
            } catch {
                throw CommandFailure("\(error.path == tlsKey ? "--tls-key" : "--tls-cert"): \(error)")
            }
        }
        try ListenCheck.check(host: host, port: port)
        // Held until the store is closed: closing this descriptor earlier would drop SQLite's own
        // locks on the file too (POSIX locks belong to the process).
        var lock: ServeLock?
        if let path = storage.sqlitePath { lock = try ServeLock.acquire(path) }
        let store: any EventStore
        do {
            store = try await storage.open(readTimeLimit: .milliseconds(Int64(readTimeoutS * 1_000)))
        } catch {
            lock?.removeIfCreated()
            if error is SQLiteStoreError { throw CommandFailure("\(error)") }
            throw CommandFailure(lock.map { "cannot open \($0.path): \(error)" } ?? "\(error)")
        }
        let listening = ListeningFlag()
        do {
            // A write at start: a store that cannot write (a read-only file, a full disk) is
            // refused now, not after "listening" and a /health that says ok.
            do { try await store.probeWrite() } catch {
                throw CommandFailure("cannot write to \(lock?.path ?? "the store"): \(error)")
            }
            let server = try CollectorServer(configuration: configuration, store: store)
            try await server.run(handleSignals: true) { url in
                listening.set()
                // The contract: this is the first line on stdout. Written straight to the file descriptor
                // (no stdio buffer), so a script reading a pipe sees it at once.
                FileHandle.standardOutput.write(Data("listening on \(url.absoluteString)\n".utf8))
            }
        } catch {
            await store.close()
            guard !listening.isSet else { throw error }
            lock?.removeIfCreated()
            // The address was free a moment ago; if it is taken now, say so as the check does.
            try ListenCheck.check(host: host, port: port)
            throw error
        }
        await store.close()
        withExtendedLifetime(lock) {}
    }
}

/// Whether the server said "listening": a failure before it is a failure to start.
final class ListeningFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every stored event (or aggregate) as one JSON object per line, with its uuid.")

    @OptionGroup var storage: StoreOptions

    @Option(help: "Only the events (or aggregates) of this app.")
    var app: String?

    @Flag(help: "Print the stored aggregates instead of the events.")
    var aggregates = false

    func run() async throws {
        let store = try await storage.openExisting(readTimeLimit: Serve.unlimitedReads)
        let output = FileHandle.standardOutput
        if aggregates {
            try await store.exportAggregates(app: app) { line in output.write(Data(line)) }
        } else {
            try await store.exportEvents(app: app) { line in output.write(Data(line)) }
        }
        await store.close()
    }
}

struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the analysis of a stored database: use-case times, abandonment and funnels, network round trips, session durations, app and SDK versions, aggregated measurements.")

    @OptionGroup var storage: StoreOptions

    @Option(help: "Only this app (default: every app in the database).")
    var app: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Option(help: "Only what happened at or after this time (Unix milliseconds, by the devices' clocks): events and spans by their timestamp, sessions and aggregates by their start. Counts then cover the matching events; duplicates, batches and what devices report about themselves stay the app's.")
    var from: Int64?

    @Option(help: "Only what happened before this time (Unix milliseconds; exclusive).")
    var to: Int64?

    @Option(help: "Only the events, spans, sessions and aggregates of this app version (the context's app_version).")
    var appVersion: String?

    @Option(help: "Only the aggregates whose dimension KEY has VALUE, given as KEY=VALUE.")
    var dimension: String?

    @Option(help: "Print the report over time instead, by second, minute, hour or day (UTC): one line per bucket with events, web events and network round trips, then the measures of the 20 aggregated names with the most events, per bucket. --from and --to bound it (default: the last 600 seconds, 120 minutes, 168 hours or 90 days, up to the end of the current one; at most 2000 buckets).")
    var series: String?

    func validate() throws {
        guard from.map({ $0 >= 0 }) ?? true, to.map({ $0 >= 0 }) ?? true else { throw ValidationError("--from and --to are Unix milliseconds, not negative") }
        if let from, let to, to < from { throw ValidationError("--to must not be before --from") }
        if let appVersion, !ReportFilter.isValidAppVersion(appVersion) {
            throw ValidationError("--app-version must be 1 to 256 bytes")
        }
        if let dimension, ReportFilter.Dimension(parsing: dimension) == nil {
            throw ValidationError("--dimension must be KEY=VALUE: a key of 1 to 256 bytes, a value of at most 256")
        }
        try validateSeries()
    }

    func run() async throws {
        let filter = ReportFilter(from: from, to: to, appVersion: appVersion,
                                  dimension: dimension.flatMap(ReportFilter.Dimension.init(parsing:)))
        let store = try await storage.openExisting(readTimeLimit: Serve.unlimitedReads)
        if let query = try seriesQuery() {
            try await printPerApp(store) { store, app in try await store.series(app: app, query: query) } render: { $0.render() }
        } else {
            try await printPerApp(store) { store, app in try await store.report(app: app, filter: filter) } render: { $0.render() }
        }
    }

    /// Computes `result` for `--app`, or for every app in the store, closes the store, and prints
    /// the results: as JSON (one object for `--app`, else an array), or their text blank-line apart.
    private func printPerApp<Result: Encodable>(_ store: any EventStore, _ result: (any EventStore, String) async throws -> Result,
                                                render: (Result) -> String) async throws {
        let apps: [String]
        if let app { apps = [app] } else { apps = try await store.apps() }
        var results: [Result] = []
        for app in apps { results.append(try await result(store, app)) }
        await store.close()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            let data = try apps.count == 1 && app != nil ? encoder.encode(results[0]) : encoder.encode(results)
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else if results.isEmpty {
            print("no events stored")
        } else {
            print(results.map(render).joined(separator: "\n\n"))
        }
    }
}

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make an app key (--app APP --keys FILE), a read token (--read-token APP --read-tokens FILE) or an Ed25519 key pair for signing policies (--private-key FILE).",
        discussion: """
            --app APP --keys FILE: makes a random app key, adds its SHA-256 to the keys file (created if missing) and \
            prints the key itself once, alone on stdout, for the app's configuration (appKey / "app_key"). The file \
            never holds the key: keep the printed key, it cannot be shown again.
            --read-token SCOPE --read-tokens FILE: makes a random read token for SCOPE (an app, apps separated by commas, \
            or * for every app), adds its SHA-256 to the read tokens file (created if missing) and prints the token \
            once, alone on stdout, for Authorization: Bearer on stats, reports, lookups and exports.
            --private-key FILE: writes an Ed25519 private key for --policy-signing-key and prints its public key for \
            the apps' configuration.
            """)

    @Option(help: "Make an app key for this app (with --keys).")
    var app: String?

    @Option(help: "The keys file to add the app key's SHA-256 to (with --app).")
    var keys: String?

    @Option(help: "Make a read token for this app, these apps (comma-separated) or * (every app); with --read-tokens.")
    var readToken: String?

    @Option(help: "The read tokens file to add the token's SHA-256 to (with --read-token).")
    var readTokens: String?

    @Option(help: "Where to write the policy-signing private key (base64, readable by its owner only).")
    var privateKey: String?

    func validate() throws {
        let appKey = app != nil || keys != nil, readAccess = readToken != nil || readTokens != nil, signing = privateKey != nil
        guard [appKey, readAccess, signing].filter({ $0 }).count == 1,
              !appKey || (app != nil && keys != nil), !readAccess || (readToken != nil && readTokens != nil) else {
            throw ValidationError("give one of --app APP --keys FILE (an app key), --read-token APP --read-tokens FILE (a read token) or --private-key FILE (a policy-signing key pair)")
        }
    }

    func run() throws {
        if let readToken, let readTokens {
            let apps = readToken.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let scope: ReadScope = readToken.trimmingCharacters(in: .whitespaces) == "*" ? .allApps : .apps(apps)
            let token = try AppKeysFile.addReadToken(for: scope, to: readTokens)
            let covered = scope == .allApps ? "every app" : "app(s) " + apps.joined(separator: ", ")
            FileHandle.standardError.write(Data("added a read token for \(covered) to \(readTokens) (its SHA-256 only); the token, shown this once:\n".utf8))
            print(token)
            return
        }
        if let app, let keys {
            let key = try AppKeysFile.addKey(for: app, to: keys)
            FileHandle.standardError.write(Data("added a key for app \(app) to \(keys) (its SHA-256 only); the key, shown this once:\n".utf8))
            print(key)
            return
        }
        guard let privateKey else { return }
        let key = Curve25519.Signing.PrivateKey()
        try SecretFile.create(privateKey, contents: key.rawRepresentation.base64EncodedString())
        print("private key written to \(privateKey)")
        print("public key (base64, for Configuration.policyOptions.publicKey / \"policy_public_key\"): \(key.publicKey.rawRepresentation.base64EncodedString())")
    }

    static func readPrivateKey(_ path: String) throws -> Curve25519.Signing.PrivateKey {
        guard let data = FileManager.default.contents(atPath: path),
              let raw = Data(base64Encoded: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
              let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw) else {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CommandFailure(FileManager.default.fileExists(atPath: path) ? "cannot read \(path)" : "no such file \(path)")
            }
            throw CommandFailure("\(path) does not hold a base64 Ed25519 private key (make one with: nflog-collector keygen --private-key FILE)")
        }
        return key
    }
}
