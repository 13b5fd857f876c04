import ArgumentParser
import Foundation
import NFLogCollector
import NFLogger
import UnixSignals

/// `nflog-demo`: a simulated app logging through the SDK to a collector, end to end, then the
/// report: what the SDK did, what the collector stored, and the analysis.
@main
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nflog-demo",
        abstract: "Run a simulated app through the NFLogger SDK into a collector and report what happened.",
        discussion: "With no arguments it starts its own collector on 127.0.0.1 with Policies/default.json and a fresh database, and exits 0 only if every event recorded reached the collector exactly once.")

    @Option(help: "Use this running nflog-collector (its base URL) instead of an embedded one.")
    var collector: String?

    @Option(help: "The app key for --collector.")
    var appKey = "dev-key"

    @Option(help: "The read token for --collector's report and lookup audit (an app key cannot read them).")
    var readToken = "dev-read-token"

    @Option(help: "The app the report and audit read on --collector, when the read token covers several (default: the token's only app).")
    var readApp: String?

    @Option(help: "The policy the embedded collector serves (default: Policies/default.json).")
    var policy: String?

    @Option(help: "The app's own mode: disabled, active or specific (it combines with the policy's; the more restrictive wins).")
    var mode: ModeOption?

    @Option(help: "About how many logging calls the simulated app makes.")
    var events = 1_500

    @Option(help: "How many foreground periods the simulated user has (each starts a session of the SDK's, unless it follows a short absence).")
    var sessions = 8

    @Option(help: "The collector is unreachable for this many seconds, then comes back.")
    var offlineSeconds: Double = 0

    @Option(help: "Keep the SDK's database here (a second run on the same path delivers what the first left).")
    var db: String?

    @Option(help: "Encrypt event parameters in the SDK's database with this key file (32 bytes, raw, base64 or hex; `openssl rand -base64 32`). The database only: outputs write plain text, so the demo then leaves out its JSON-lines file output.")
    var encryptionKeyFile: String?

    @Option(help: "Trust only this certificate (PEM or DER) for --collector https://…: the SDK pins it.")
    var pinCert: String?

    @Option(help: "Append the uuid of every event as its completion reports .recorded, one per line.")
    var receipts: String?

    @Option(help: "The simulation's seed.")
    var seed: UInt64 = 42

    @Flag(help: "Print the report as JSON on stdout (the human summary goes to stderr).")
    var json = false

    @Option(help: "How long one request to the collector may take, in seconds (uploads, policy, audit).")
    var requestTimeout: Double = 10

    @Option(help: "After the simulation, log this many extra point events as fast as the SDK takes them and time their commit and delivery.")
    var burst = 0

    @Flag(help: "After the report, keep the embedded collector up (its dashboard, with the read token printed) until SIGINT or SIGTERM.")
    var keepRunning = false

    enum ModeOption: String, ExpressibleByArgument, CaseIterable {
        case disabled, active, specific
    }

    func validate() throws {
        guard events >= 0 else { throw ValidationError("--events must be zero or more") }
        guard burst >= 0 else { throw ValidationError("--burst must be zero or more") }
        if pinCert != nil, collector == nil {
            throw ValidationError("--pin-cert is for --collector https://…; the embedded collector speaks plain HTTP on loopback")
        }
        guard (1...10_000).contains(sessions) else { throw ValidationError("--sessions must be between 1 and 10000") }
        guard offlineSeconds >= 0, offlineSeconds <= 3_600 else { throw ValidationError("--offline-seconds must be between 0 and 3600") }
        guard requestTimeout > 0, requestTimeout <= 600 else { throw ValidationError("--request-timeout must be between 0 and 600 seconds") }
        if let collector {
            guard let url = URL(string: collector), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--collector must be an http(s) URL such as http://127.0.0.1:8080")
            }
            if pinCert != nil, url.scheme != "https" {
                throw ValidationError("--pin-cert needs an https --collector (serve --tls-cert FILE --tls-key FILE)")
            }
            guard policy == nil else {
                throw ValidationError("--policy is for the embedded collector; a running collector serves its own (serve --policies DIR)")
            }
            guard !keepRunning else {
                throw ValidationError("--keep-running keeps the embedded collector up; a running --collector stays up without it")
            }
        }
    }

    /// Policies/default.json of the source tree this demo was built from.
    static let defaultPolicy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()  // Server/Demo/DemoCommand.swift → the repository
        .appendingPathComponent("Policies/default.json")

    func run() async throws {
        let pinning = try pinCert.map { try CertificatePinning(contentsOf: [URL(fileURLWithPath: $0)]) }
        let transport = DefaultHTTPTransport(timeout: requestTimeout, pinning: pinning)
        // What no retry can mend is found before anything starts: a policy the SDK would refuse,
        // a collector nothing answers for, a certificate not trusted.
        let server: DemoCollector
        if let collector, let url = URL(string: collector) {
            try await Preflight.collector(url, transport: transport, pinCert: pinCert, attempts: DemoCollector.attempts)
            server = .remote(url, appKey: appKey, readToken: readToken, readApp: readApp, transport: transport)
        } else {
            let data = try Preflight.policy(at: policy.map { URL(fileURLWithPath: $0) } ?? Self.defaultPolicy, given: policy != nil)
            server = try await .embedded(policy: data)
        }
        let started = ContinuousClock.now
        // The app's backend, with an NFLogger of its own: the app's use cases reach it.
        let backend = try await DemoBackend.start(collector: server.url, appKey: server.appKey, pinning: pinning, requestTimeout: requestTimeout)
        let databaseURL = db.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("nflog-demo-\(UUID().uuidString)").appendingPathComponent("events.sqlite")

        var configuration = Configuration(databaseURL: databaseURL, appID: "com.example.shop", appVersion: "2.1.0")
        configuration.uploadURL = server.url.appendingPathComponent("v1/events")
        configuration.policyURL = server.url.appendingPathComponent("v1/policy")
        configuration.appKey = server.appKey
        configuration.policyOptions.installID = "nflog-demo-\(seed)"  // sampling decisions are part of the fixed seed
        configuration.encryptionKey = try encryptionKeyFile.map { try EncryptionKey(contentsOf: URL(fileURLWithPath: $0)) }
        configuration.network.transport = OfflineTransport(real: transport, online: started + .milliseconds(Int64(offlineSeconds * 1_000)))
        configuration.upload.interval = 1
        configuration.propagation.hosts = [backend.url.host ?? "127.0.0.1"]  // the backend is first-party
        configuration.webBridge.allowedOrigins = [HelpPage.origin]  // the app's own help pages
        configuration.upload.initialBackoff = 0.2
        configuration.upload.maxBackoff = 1
        configuration.upload.requestTimeout = requestTimeout
        configuration.sessionIdleTimeout = SimulatedApp.sessionIdleTimeout
        // A second, durable output beside the collector: the network events also go to files.
        // Not with --encryption-key-file: the key seals the SDK's database only, and these files
        // would hold the same parameters in plain text beside it.
        let jsonLines = databaseURL.deletingLastPathComponent().appendingPathComponent("jsonl")
        if encryptionKeyFile == nil { configuration.outputs = [JSONLinesOutput(directory: jsonLines, pattern: "net.**")] }
        let logger = try NFLogger(configuration: configuration)
        // A flaky network may lose the first fetch: a few more, a little apart, as for the audit.
        var policyUpdate = await logger.refreshPolicy()
        var policyTries = 1
        while case .failed(let error) = policyUpdate, error != .closed, policyTries < DemoCollector.attempts {
            try await Task.sleep(for: .milliseconds(250 << min(policyTries, 4)))
            policyTries += 1
            policyUpdate = await logger.refreshPolicy()
        }
        if let mode { logger.mode = try Self.mode(mode) }

        let tally = try Tally(receiptsPath: receipts)
        let status = StatusLine()
        status.start(logger: logger, tally: tally)
        let backendHTTP = DefaultHTTPTransport(timeout: requestTimeout)
        var app = SimulatedApp(logger: logger, tally: tally, status: status, sessions: sessions, targetCalls: events, seed: seed,
                               backend: backend.url, http: backendHTTP)
        await app.run()

        var burstLine: String?
        if burst > 0 {
            status.update(phase: "burst", done: 0, total: 1)
            burstLine = await Burst(logger: logger, tally: tally, count: burst).run()
        }

        // An aggregate travels once its window ends, or at a flush once it has been open a
        // second: give the last frame timings' aggregates that second.
        if tally.counts.aggregated > 0 { try await Task.sleep(for: .milliseconds(1_050)) }
        // Deliver: wait out the offline period and any retries, for as long as delivery keeps
        // making progress (a collector asking for Retry-After pauses takes long but gets there).
        status.update(phase: "delivering", done: app.calls, total: app.calls)
        let flushed = await logger.deliverAll(notBefore: started + .milliseconds(Int64(offlineSeconds * 1_000)))
        await status.stop()
        // The last completions follow their commits: waited for while more keep coming.
        var completions = ProgressWatch(patience: DeliveryPatience(quiet: .seconds(30), failedAttempts: 0), delivered: tally.counts.calls,
                                        retries: 0, now: .now)
        while tally.counts.calls < app.calls + burst, completions.keepWaiting(delivered: tally.counts.calls, retries: 0, now: .now) {
            try await Task.sleep(for: .milliseconds(10))
        }

        let diagnostics = await logger.diagnostics()
        await logger.close()
        // What the file output wrote, counted before a temporary directory goes.
        let written = (try? FileManager.default.contentsOfDirectory(atPath: jsonLines.path))?.filter { $0.hasSuffix(".jsonl") }
            .compactMap { try? String(contentsOf: jsonLines.appendingPathComponent($0), encoding: .utf8) }
            .reduce(0) { $0 + $1.split(separator: "\n").count } ?? 0
        backendHTTP.shutdown()
        // The backend's server spans, delivered before the report is asked for.
        let backendResult = await backend.stop()
        // A span's start and end both complete .recorded with the span's id: one event.
        let ids = Array(Set(tally.recordedIDs))
        // The lookup and the report are the demo's extras: a collector without them is told apart
        // from one that lost events.
        var unaudited: [String] = []
        var audit: (found: Int, missing: [String])?
        do { audit = try await server.countStored(ids) } catch let error as DemoCollector.Unsupported { unaudited.append("\(error)") }
        var report: AnalyticsReport?
        do { report = try await server.report() } catch let error as DemoCollector.Unsupported { unaudited.append("\(error)") }
        let aggregateIDs = tally.aggregateIDs
        var aggregateAudit: (events: Int, aggregates: Int)?
        if !aggregateIDs.isEmpty {
            do { aggregateAudit = try await server.aggregatedEvents(in: aggregateIDs) } catch let error as DemoCollector.Unsupported {
                unaudited.append("\(error)")
            }
        }
        if !keepRunning { await server.stop() }
        if db == nil { try? FileManager.default.removeItem(at: databaseURL.deletingLastPathComponent()) }

        let counts = tally.counts
        // Folded events: every aggregate they were folded into is stored, once, holding them all.
        let aggregatesDelivered = aggregateAudit.map { $0.aggregates == aggregateIDs.count && $0.events == counts.aggregated }
            ?? (diagnostics.storedAggregates == 0)
        let exactlyOnce = aggregatesDelivered && (audit.map { $0.found == ids.count && $0.missing.isEmpty }
            ?? (diagnostics.waitingForUpload == 0 && diagnostics.uploadedEvents >= ids.count))
        let filtered = counts.filtered.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let failures = counts.failures.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: "; ")
        var lines = [
            "NFLogger \(NFLogger.sdkVersion) demo · seed \(seed) · \(sessions) foreground periods in \(app.sessionIDs.count) sessions · \(app.calls) logging calls · collector \(server.url.absoluteString)\(server.isEmbedded ? " (embedded)" : "")\(pinning == nil ? "" : " · certificate pinned")\(encryptionKeyFile == nil ? "" : " · parameters encrypted at rest")\(offlineSeconds > 0 ? " · offline for the first \(offlineSeconds) s" : "")",
            "Policy: \(Self.describe(policyUpdate, diagnostics.policy)) · app mode \(logger.mode)",
            "SDK: \(counts.recorded) calls recorded (\(ids.count) events, \(counts.spanEnds) span ends\(counts.aggregated > 0 ? ", \(counts.aggregated) folded into \(aggregateIDs.count) aggregates" : "")) · \(counts.filteredTotal) filtered\(filtered.isEmpty ? "" : " (\(filtered))") · \(counts.disabled) disabled · \(counts.failed) failed\(failures.isEmpty ? "" : " (\(failures))")",
            "Uploads: \(diagnostics.uploadedEvents) \(aggregateIDs.isEmpty ? "events" : "records (events and aggregates)") in \(diagnostics.uploadedBatches) batches · \(diagnostics.retriedUploads) retries · \(diagnostics.quarantinedEvents) quarantined · \(diagnostics.waitingForUpload) waiting · \(diagnostics.prunedEvents) pruned",
        ]
        if let file = diagnostics.outputs.first(where: { $0.id == "file" }) {
            lines.append("Outputs: collector \(diagnostics.outputs.first?.delivered ?? 0) delivered · file (net.**) \(file.delivered) delivered, \(written) lines of plain-text JSON in \(db == nil ? "a temporary directory, deleted with the run (--db keeps them beside the database)" : jsonLines.path), \(file.waiting) waiting")
        } else if encryptionKeyFile != nil {
            lines.append("Outputs: collector \(diagnostics.outputs.first?.delivered ?? 0) delivered · no JSON-lines file output: its files are plain text, and --encryption-key-file seals parameters at rest in the SDK's database only (docs/SECURITY.md)")
        }
        lines.append("Backend: \(backendResult.diagnostics.uploadedEvents) server spans uploaded (NFLoggerMiddleware; no logging call in its handlers) · \(backendResult.flushed.remainingEvents) waiting")
        if let report { lines.append(report.render()) }
        if let burstLine { lines.insert(burstLine, at: 4) }
        lines += unaudited.map { "Not audited: \($0)." }
        let verdict = switch (exactlyOnce, audit) {
        case (true, .some): "OK: all \(ids.count) events recorded in this run reached the collector exactly once\(aggregateAudit.map { ", and the \($0.aggregates) aggregates holding the \($0.events) folded events" } ?? "")."
        case (true, nil): "OK (not audited): all \(ids.count) events recorded in this run were uploaded and acknowledged; the collector cannot be asked which it stored."
        case (false, let audit) where !aggregatesDelivered:
            "FAILED: the collector holds \(aggregateAudit?.aggregates ?? 0) of the \(aggregateIDs.count) aggregates (\(aggregateAudit?.events ?? 0) of the \(counts.aggregated) folded events)\(audit.map { $0.found == ids.count ? "" : "; and \(ids.count - $0.found) of the \(ids.count) events are missing" } ?? "")."
        case (false, let audit): "FAILED: \(ids.count - (audit?.found ?? diagnostics.uploadedEvents)) of the \(ids.count) events recorded in this run are not at the collector (\(flushed.error.map { "\($0)" } ?? "still waiting"))."
        }
        lines.append(server.dashboardLine(keptRunning: keepRunning))
        lines.append(verdict)
        let text = lines.joined(separator: "\n") + "\n"
        // Trapped before the URL is printed: a SIGTERM sent on seeing it stops the collector
        // gracefully rather than killing the process.
        let signals = keepRunning ? await UnixSignalsSequence(trapping: .sigint, .sigterm) : nil
        if json {
            FileHandle.standardError.write(Data(text.utf8))
            let summary = DemoSummary(
                seed: seed, sessions: sessions, calls: app.calls, recorded: counts.recorded, filtered: counts.filtered,
                disabled: counts.disabled, failed: counts.failed, uploaded: diagnostics.uploadedEvents,
                retried: diagnostics.retriedUploads, quarantined: diagnostics.quarantinedEvents,
                waiting: diagnostics.waitingForUpload, reachedCollector: audit?.found, exactlyOnce: exactlyOnce, audited: audit != nil,
                collector: report, aggregated: counts.aggregated, aggregates: aggregateIDs.count,
                aggregatesReachedCollector: aggregateAudit?.aggregates, sdkSessions: app.sessionIDs.count, spanEnds: counts.spanEnds,
                failures: counts.failures)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            FileHandle.standardOutput.write(try encoder.encode(summary) + Data("\n".utf8))
        } else {
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        if let signals {
            FileHandle.standardError.write(Data("The collector keeps running at \(server.url.absoluteString) until SIGINT (Ctrl-C) or SIGTERM.\n".utf8))
            for await _ in signals { break }
            await server.stop()
        }
        if !exactlyOnce { throw ExitCode.failure }
    }

    static func mode(_ option: ModeOption) throws -> LogMode {
        switch option {
        case .disabled: .disabled
        case .active: .active
        case .specific: .specific(try EventRules(allow: ["app.**", "screen.*", "form.**", "flow.**", "net.**"]))
        }
    }

    static func describe(_ update: PolicyUpdate, _ status: PolicyStatus) -> String {
        switch update {
        case .applied, .unchanged: "from the collector (\(status.etag ?? "no ETag"))"
        case .notServed: "none served (the configuration's defaults apply)"
        case .rejected(let error): "refused (\(error)); defaults apply"
        case .failed(let error): "not fetched (\(error)); \(status.source == .none ? "defaults apply" : "the \(status.source.rawValue) policy applies")"
        }
    }
}

/// The demo's result, as `--json` prints it.
struct DemoSummary: Codable {
    let seed: UInt64
    let sessions, calls, recorded: Int
    let filtered: [String: Int]
    let disabled, failed, uploaded, retried, quarantined, waiting: Int
    /// `nil` when the collector has no lookup endpoint to ask.
    let reachedCollector: Int?
    let exactlyOnce: Bool
    /// Whether the collector confirmed each event (`false`: the SDK's acknowledgements only).
    let audited: Bool
    /// `nil` when the collector has no report endpoint.
    let collector: AnalyticsReport?
    /// Of `recorded`: the events folded into aggregates, and how many aggregates hold them.
    let aggregated: Int
    let aggregates: Int
    /// `nil` when the collector could not be asked (or nothing was folded).
    let aggregatesReachedCollector: Int?
    /// The SDK's sessions the `sessions` foreground periods fell into.
    let sdkSessions: Int
    /// Of `recorded`: span and transaction ends (`recorded` = events + span ends + aggregated).
    let spanEnds: Int
    /// Of `failed`: how many with each error.
    let failures: [String: Int]

    enum CodingKeys: String, CodingKey {
        case seed, sessions, calls, recorded, filtered, disabled, failed, uploaded, retried, quarantined, waiting, collector, audited
        case aggregated, aggregates
        case reachedCollector = "reached_collector"
        case exactlyOnce = "exactly_once"
        case aggregatesReachedCollector = "aggregates_reached_collector"
        case sdkSessions = "sdk_sessions"
        case spanEnds = "span_ends"
        case failures
    }
}
