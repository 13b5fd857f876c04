import ArgumentParser
import FaultProxy
import Foundation

/// `nflog-fault-proxy --upstream http://127.0.0.1:PORT [--rate 0.3] …`: the tests' fault proxy as
/// a command, to put between `nflog-demo` (or any client) and `nflog-collector`. Prints
/// `listening on http://127.0.0.1:PORT` first; on SIGTERM or SIGINT, its counts as one JSON line.
@main
struct FaultProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nflog-fault-proxy",
        abstract: "A reverse proxy on 127.0.0.1 that breaks a seeded share of the requests passing through it.")

    @Option(help: "Where to forward, http://HOST:PORT.") var upstream: String
    @Option(help: "The port to listen on (0: any free one).") var port = 0
    @Option(help: "The share of faultable requests to fault, 0 to 1.") var rate = 0.3
    @Option(help: "Comma-separated kinds, or 'all': \(FaultKind.allCases.map(\.rawValue).joined(separator: ", ")).") var faults = "all"
    @Option(help: "Seeds the decisions.") var seed: UInt64 = 1
    @Option(help: "Comma-separated methods that may be faulted, or 'all'.") var methods = "POST"
    @Option(help: "The Retry-After seconds of a 503 or 429.") var retryAfter = 1
    @Option(help: "Milliseconds between the bytes of a slow response.") var slowByteMs = 20
    @Option(help: "Seconds a stalled connection is held open at most.") var stallLimitS = 30
    @Flag(help: "Print each request to stderr as it is decided: milliseconds since start, number, method, target, fault.") var trace = false

    func validate() throws {
        guard (0...1).contains(rate) else { throw ValidationError("--rate must be between 0 and 1, not \(rate)") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard retryAfter >= 0, slowByteMs >= 0, stallLimitS >= 0 else { throw ValidationError("times cannot be negative") }
        _ = try upstreamAddress()
        _ = try faultKinds()
    }

    func upstreamAddress() throws -> (host: String, port: Int) {
        guard let url = URL(string: upstream), url.scheme == "http", let host = url.host, let port = url.port else {
            throw ValidationError("--upstream must be http://HOST:PORT, not '\(upstream)'")
        }
        return (host, port)
    }

    func faultKinds() throws -> [FaultKind] {
        if faults == "all" { return FaultKind.allCases }
        return try faults.split(separator: ",").map { name in
            guard let kind = FaultKind(rawValue: String(name)) else {
                throw ValidationError("unknown fault '\(name)'; known: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
    }

    func run() async throws {
        let (host, upstreamPort) = try upstreamAddress()
        var settings = FaultProxyConfiguration(upstreamHost: host, upstreamPort: upstreamPort)
        settings.listenPort = port
        settings.faultRate = rate
        settings.faults = try faultKinds()
        settings.seed = seed
        settings.methods = methods == "all" ? nil : Set(methods.split(separator: ",").map { $0.uppercased() })
        settings.retryAfterSeconds = retryAfter
        settings.slowByteInterval = .milliseconds(slowByteMs)
        settings.stallLimit = .seconds(stallLimitS)
        if trace {
            let started = ContinuousClock.now
            settings.trace = { number, method, uri, fault in
                let elapsed = ContinuousClock.now - started
                let milliseconds = elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
                FileHandle.standardError.write(Data("\(milliseconds) ms #\(number) \(method) \(uri) \(fault?.rawValue ?? "-")\n".utf8))
            }
        }
        let proxy = FaultProxy(settings)
        try await proxy.start()
        // Unbuffered, so a script reading the first line gets it now.
        FileHandle.standardOutput.write(Data("listening on \(proxy.url.absoluteString)\n".utf8))
        await Self.waitForTermination()
        await proxy.shutdown()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(proxy.counts()) + Data("\n".utf8))
    }

    /// Returns on SIGTERM or SIGINT (their default actions turned off, so the counts get printed).
    static func waitForTermination() async {
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
            let once = SignalOnce(stopped)
            for signalNumber in [SIGTERM, SIGINT] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
                source.setEventHandler { once.fire() }
                source.resume()
                once.keep(source)
            }
        }
    }
}

/// Resumes the waiting continuation on the first signal only, and keeps the signal sources alive.
/// Invariant: only used on the main queue (where the sources deliver) after setup.
final class SignalOnce: @unchecked Sendable {
    private var continuation: CheckedContinuation<Void, Never>?
    private var sources: [any DispatchSourceSignal] = []
    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
    func keep(_ source: any DispatchSourceSignal) { sources.append(source) }
    func fire() {
        continuation?.resume()
        continuation = nil
    }
}
