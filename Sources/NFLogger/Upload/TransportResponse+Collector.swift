import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reading the collector's answers: its error body (`{"error":{"message","path"}}`, see
/// docs/PROTOCOL.md) and `Retry-After`.
extension TransportResponse {
    /// The collector's error message, or the start of the body.
    var errorMessage: String {
        if let message = errorObject?["message"] as? String { return String(message.prefix(500)) }
        return String(decoding: body.prefix(200), as: UTF8.self)
    }

    /// Where in the batch the collector found the problem (`events[3].name`), if it said.
    var errorPath: String? { errorObject?["path"] as? String }

    private var errorObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? [String: Any]
    }

    /// `Retry-After` as a wait from `now`, in seconds: delay-seconds or an HTTP date (RFC 9110
    /// §10.2.3).
    func retryAfter(now: Date = Date()) -> TimeInterval? {
        guard let value = header("Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(value) { return TimeInterval(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

/// A transport error in a line: URLError's code and text, anything else as it describes itself.
func describeTransportError(_ error: any Error) -> String {
    if let error = error as? URLError { return "\(error.code.rawValue): \(error.localizedDescription)" }
    return "\(error)"
}
