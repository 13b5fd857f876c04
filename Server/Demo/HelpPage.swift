import Foundation
import NFLogger

/// The shopping app's help screen: web content whose events reach the app's logger through a
/// `ScriptBridge`. The demo has no browser, so it feeds the bridge the messages `nflogger.js`
/// would post from the page (docs/BRIDGE.md), and hands each reply to the tally as the page's
/// Promise would resolve.
struct HelpPage {
    static let origin = "https://help.shop.example"
    let bridge: ScriptBridge
    let tally: Tally
    private var nextID = 0

    init(bridge: ScriptBridge, tally: Tally) {
        self.bridge = bridge
        self.tally = tally
    }

    /// Posts one message as the page would; returns the reply's `event` id, if it was recorded.
    @discardableResult
    mutating func post(_ fields: [String: Any]) async -> String? {
        nextID += 1
        var message = fields
        message["v"] = 1
        message["id"] = nextID
        guard let body = try? JSONSerialization.data(withJSONObject: message) else { return nil }
        let reply = await bridge.handle(message: body, origin: Self.origin)
        let object = (try? JSONSerialization.jsonObject(with: reply)) as? [String: Any] ?? [:]
        tally.note(Self.status(object))
        return object["event"] as? String
    }

    /// The reply as the `LogStatus` a native call would have completed with.
    private static func status(_ reply: [String: Any]) -> LogStatus {
        switch reply["status"] as? String {
        case "recorded":
            return (reply["event"] as? String).flatMap(UUID.init(uuidString:)).map { .recorded($0) } ?? .disabled
        case "filtered":
            let reasons: [String: FilterReason] = ["notSelected": .notSelected, "denied": .denied, "sampledOut": .sampledOut,
                                                   "insidePrivacyZone": .insidePrivacyZone, "sdkBelowMinimumVersion": .sdkBelowMinimumVersion,
                                                   "consentDenied": .consentDenied, "noOutput": .noOutput]
            // The reply names the reason, not which filter dropped it.
            let reason = reply["reason"] as? String ?? ""
            return .filtered(reason == "droppedByFilter" ? .droppedByFilter("(web)") : reasons[reason] ?? .denied)
        case "disabled": return .disabled
        default:
            let message = (reply["error"] as? [String: Any])?["message"] as? String ?? "the bridge refused the message"
            return .failed(.invalidParameter(key: "(web)", reason: message))
        }
    }
}
