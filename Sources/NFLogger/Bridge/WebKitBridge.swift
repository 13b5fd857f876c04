// The WebKit adaptor: Apple platforms only. Nothing here can build for Apple platforms, so this
// file has never been compiled or run; it is kept to this one small file, behind the check.
#if canImport(WebKit)
public import WebKit

/// Injects `nflogger.js` into the pages of a web view and hands their messages to a
/// ``ScriptBridge``, answering each through WebKit's reply handler (the page's Promise).
///
/// ```swift
/// let bridge = WebKitBridge(bridge: ScriptBridge(logger: logger))
/// try bridge.install(in: webView.configuration.userContentController)
/// ```
@available(iOS 15, macOS 12, *)
@MainActor
public final class WebKitBridge: NSObject, WKScriptMessageHandlerWithReply {
    private let bridge: ScriptBridge

    public init(bridge: ScriptBridge) {
        self.bridge = bridge
    }

    /// Adds the script at document start (main frame and iframes: the bridge checks each frame's
    /// origin) and the `nflogger` message handler.
    public func install(in controller: WKUserContentController) throws {
        let script = WKUserScript(source: try ScriptBridge.script, injectionTime: .atDocumentStart, forMainFrameOnly: false)
        controller.addUserScript(script)
        controller.addScriptMessageHandler(self, contentWorld: .page, name: "nflogger")
    }

    public func userContentController(_ controller: WKUserContentController, didReceive message: WKScriptMessage,
                                      replyHandler: @escaping @MainActor @Sendable (Any?, String?) -> Void) {
        let origin = message.frameInfo.securityOrigin
        let text = origin.port == 0 ? "\(origin.protocol)://\(origin.host)" : "\(origin.protocol)://\(origin.host):\(origin.port)"
        let body = (try? JSONSerialization.data(withJSONObject: message.body)) ?? Data()
        bridge.handle(message: body, origin: text) { reply in
            let object = try? JSONSerialization.jsonObject(with: reply)
            Task { @MainActor in replyHandler(object, nil) }
        }
    }
}
#endif
