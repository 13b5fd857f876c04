import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection that takes too long (``ConnectionLimits``): no complete request head
/// within `requestHeadTimeout` of the connection opening or of the previous response, or a body
/// slower than the minimum rate. Sits after the HTTP decoder, so it sees whole heads and the end
/// of each body; the time the server takes to answer is never counted against the client.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private let maxBodyBytes: Int
    /// The one deadline in force (a head's or a body's); all on the channel's event loop.
    private var deadline: Scheduled<Void>?

    init(limits: ConnectionLimits, maxBodyBytes: Int) {
        self.limits = limits
        self.maxBodyBytes = maxBodyBytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context, after: limits.requestHeadTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let length = head.headerFields[.contentLength].flatMap(Int.init)
            if length == 0 || (length == nil && head.headerFields[.transferEncoding] == nil) {
                disarm()  // no body: nothing more to wait for until the answer is written
            } else {
                arm(context, after: limits.bodyDeadline(length: length, maxBytes: maxBodyBytes))
            }
        case .end:
            disarm()
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // The answer is out: the client has its turn again.
            arm(context, after: limits.requestHeadTimeout)
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, after delay: Duration) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(delay)) {
            channel.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
