import Foundation

/// What becomes of a batch, by the collector's answer: the table in docs/PROTOCOL.md.
enum UploadVerdict: Equatable {
    /// Stored: its rows leave the device.
    case delivered
    /// Too big, or one of its events is refused: sent again in halves; a single event refused
    /// this way is quarantined with the collector's reason.
    case split
    /// A temporary failure: the same batch goes again after a backoff, never before `after`
    /// seconds.
    case retry(after: TimeInterval?)
    /// Retrying soon cannot help (the key, the URL, or the batch's envelope is refused): every
    /// event is kept and uploads wait long.
    case pause

    init(_ response: TransportResponse) {
        switch response.status {
        case 200..<300:            self = .delivered
        case 413:                  self = .split
        case 400, 422:             self = response.errorPath.map { $0.hasPrefix("events[") || $0.hasPrefix("aggregates[") } == true ? .split : .pause
        case 408, 429, 500..<600:  self = .retry(after: response.retryAfter())
        default:                   self = .pause  // 401, 403, 404, a redirect, …
        }
    }
}
