import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NFLogger

/// What the demo checks before it starts anything, so that a mistake that no retry can mend ends
/// the run at once with what to do, rather than after every retry of every upload.
enum Preflight {
    /// The policy file the embedded collector is to serve, parsed as the SDK parses a policy.
    static func policy(at url: URL, given: Bool) throws -> Data {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw DemoError("cannot read the policy \(url.path)\(given ? " (--policy)" : "")")
        }
        do {
            _ = try Policy.parse(data)
        } catch {
            throw DemoError("the policy \(url.path) is not valid: \(error). Fix it (Policies/README.md lists the fields)\(given ? ", or leave out --policy to serve Policies/default.json" : "").")
        }
        return data
    }

    /// Asks `--collector` for `GET /health` until it answers at all (any status: something that
    /// speaks HTTP is there). Nothing listening and a certificate that is not trusted fail at
    /// once; other failures (a timeout, a dropped connection) are tried again a few times.
    static func collector(_ url: URL, transport: any HTTPTransport, pinCert: String?, attempts: Int) async throws {
        let health = url.appendingPathComponent("health")
        var attempt = 0
        while true {
            attempt += 1
            do {
                _ = try await transport.send(TransportRequest(url: health, method: "GET", headers: [:], body: Data()))
                return
            } catch {
                if let problem = unrecoverable(error, url: url, pinCert: pinCert) { throw DemoError(problem) }
                guard attempt < attempts else {
                    // An https collector asked over http:// closes the connection without a word.
                    let https = url.scheme == "http" && "\(error)".contains("Closed") ? " An https collector closes plain-HTTP connections: is it https://…?" : ""
                    throw DemoError("the collector at \(url.absoluteString) did not answer GET /health in \(attempt) attempts (last: \(error)). Is it running, and is this the URL its `serve` printed after \"listening on\"?\(https)")
                }
                try await Task.sleep(for: .milliseconds(250 << min(attempt, 4)))
            }
        }
    }

    /// What to tell the user when `error` cannot get better by trying again, else `nil`.
    static func unrecoverable(_ error: any Error, url: URL, pinCert: String?) -> String? {
        let text = "\(error)"
        let kind = "\(type(of: error))"
        let refused = String(cString: strerror(ECONNREFUSED))
        let urlError = error as? URLError
        if text.contains(refused) || urlError?.code == .cannotConnectToHost {
            return "nothing is listening at \(url.absoluteString) (connection refused). Is the collector running? Start one with `nflog-collector serve --port 0 --db collector.sqlite --policies Policies` and pass the URL it prints after \"listening on\" (or leave out --collector: the demo then runs its own)."
        }
        let tlsCodes: Set<URLError.Code> = [.secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                                            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid]
        let tls = kind.hasPrefix("NIOSSL") || kind == "UntrustedCollector" || text.contains("OPENSSL_internal")
            || urlError.map { tlsCodes.contains($0.code) } == true
        guard tls else { return nil }
        let reason = Self.reason(text)
        if reason.contains("WRONG_VERSION_NUMBER") || reason.contains("PACKET_LENGTH_TOO_LONG") {
            return "\(url.absoluteString) does not speak TLS (\(reason)). Is the collector serving plain HTTP? Use http://…, or start it with `serve --tls-cert FILE --tls-key FILE`."
        }
        if let pinCert {
            let detail = kind == "UntrustedCollector" ? text : reason
            return "the collector at \(url.absoluteString) is not trusted with --pin-cert \(pinCert) (\(detail)). Pin the certificate its `serve --tls-cert` uses, which must name \(url.host ?? "the host") (`nflog-collector tls-cert --host NAME`)."
        }
        return "the collector at \(url.absoluteString) presented a certificate this machine does not trust (\(reason)). For a self-signed certificate (such as `nflog-collector tls-cert` makes), pass it with --pin-cert FILE."
    }

    /// BoringSSL's reason (`CERTIFICATE_VERIFY_FAILED`) out of an error's text, without its codes
    /// and source paths.
    static func reason(_ text: String) -> String {
        if text.contains("failedToValidateHostname") || text.contains("does not name") { return "the certificate does not name this host" }
        guard let start = text.range(of: "OPENSSL_internal:")?.upperBound else {
            return text.contains("pinned") ? "not one of the pinned certificates" : "TLS handshake failed"
        }
        let reason = text[start...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return reason.isEmpty ? "TLS handshake failed" : "TLS handshake failed: \(reason)"
    }
}
