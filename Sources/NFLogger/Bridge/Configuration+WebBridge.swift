extension Configuration {
    /// What web content may log through a ``ScriptBridge`` (docs/BRIDGE.md).
    public struct WebBridge: Sendable, Equatable {
        /// Origins (`scheme://host[:port]`, as a browser writes them: `https://help.example.com`)
        /// whose pages may log. Empty by default: the bridge refuses every message until the app
        /// names the pages it trusts, so a third-party page cannot write into the app's data.
        public var allowedOrigins: [String] = []
        /// Messages a page's origin may send per second, and in a burst; past them a message gets
        /// `rateLimited` and is counted in ``Diagnostics/webMessagesRateLimited``.
        public var messagesPerSecond: Double = 50
        public var burst: Double = 200

        public init(allowedOrigins: [String] = []) {
            self.allowedOrigins = allowedOrigins
        }
    }
}
