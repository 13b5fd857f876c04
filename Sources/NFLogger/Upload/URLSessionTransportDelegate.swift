import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Security)
import Security
#endif

/// Refuses redirects (the collector's URL is configuration, not something a response may move)
/// and, on Apple platforms, evaluates the server's trust against the pinned certificates.
final class URLSessionTransportDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let pinning: CertificatePinning?
    /// Why the pinning check refused each host last. A ``Lock``, not an `NSLock`: `NSLocking`'s
    /// `withLock` needs iOS 17 / macOS 14.
    private let refusals = Lock<[String: UntrustedCollector]>([:])

    init(pinning: CertificatePinning?) {
        self.pinning = pinning
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    /// Why the pinning check refused `host` last, taken once (the request that failed reports it).
    func refusal(for host: String?) -> UntrustedCollector? {
        refusals.withLock { $0.removeValue(forKey: host ?? "") }
    }

    private func refuse(_ host: String, _ detail: String) {
        refusals.withLock { $0[host] = UntrustedCollector(host: host, detail: detail) }
    }

    #if canImport(Security)
    // Apple platforms only. Written for review: nothing on this project's machines builds for
    // Apple platforms, so this method has not been compiled or run.
    //
    // The pinned certificates replace the system's roots (anchors only), and the SSL policy
    // still checks the host name, as async-http-client's full verification does on Linux.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let pinning, challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust else {
            return completionHandler(.performDefaultHandling, nil)
        }
        let host = challenge.protectionSpace.host
        let anchors = pinning.derCertificates.compactMap(CertificatePinning.platformCertificate)
        SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
        SecTrustSetAnchorCertificates(trust, anchors as CFArray)
        SecTrustSetAnchorCertificatesOnly(trust, true)
        var failure: CFError?
        if SecTrustEvaluateWithError(trust, &failure) {
            completionHandler(.useCredential, URLCredential(trust: trust))
        } else {
            let reason = failure.map { CFErrorCopyDescription($0) as String } ?? "trust evaluation failed"
            refuse(host, "its certificate is not one of the pinned certificates (\(reason))")
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
    #endif
}

#if canImport(Security)
extension CertificatePinning {
    /// A DER certificate as the Security framework reads it, or `nil` if it is not one.
    static func platformCertificate(_ der: [UInt8]) -> SecCertificate? {
        SecCertificateCreateWithData(nil, Data(der) as CFData)
    }
}
#endif
