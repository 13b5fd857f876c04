import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Hummingbird's HTTP/1.1 channel with the collector's limits on connections: at most
/// `maxConnections` at once (past it a connection is closed as soon as it is accepted, before it
/// costs a request's worth of memory), the deadlines of ``ConnectionDeadlineHandler``, and
/// `Expect: 100-continue` answered (``ContinueHandler``).
struct LimitedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let inner: HTTP1Channel
    let admission: ConnectionAdmission

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ConnectionLimits, admission: ConnectionAdmission) {
        inner = HTTP1Channel(responder: responder, configuration: .init(additionalChannelHandlers: [
            ContinueHandler(), ConnectionDeadlineHandler(limits: limits),
        ]))
        self.admission = admission
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admitted = admission.admit(logger: logger)
        if admitted {
            channel.closeFuture.whenComplete { _ in admission.release() }
        }
        return inner.setup(channel: channel, logger: logger).map { value in
            // Over the limit: set up as usual (a failed setup would reach the accept loop) and
            // closed at once; Hummingbird's handler then finds the connection ended.
            if !admitted { channel.close(promise: nil) }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Counts open connections against ``ConnectionLimits/maxConnections``.
final class ConnectionAdmission: Sendable {
    private let open = Atomic<Int>(0)
    let maxConnections: Int
    private let refusals = ThrottledLog(interval: .seconds(60))

    init(maxConnections: Int) {
        self.maxConnections = maxConnections
    }

    var openConnections: Int { open.load(ordering: .relaxed) }

    /// Takes a place for a new connection, or says no (and logs it, once a minute with a count).
    func admit(logger: Logger) -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        guard now > maxConnections else { return true }
        open.subtract(1, ordering: .relaxed)
        refusals.log("connections", level: .warning, logger: logger,
                     "refusing connections: \(maxConnections) are open (--max-connections)")
        return false
    }

    func release() {
        open.subtract(1, ordering: .relaxed)
    }
}
