import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection that takes too long (``ConnectionLimits``): no complete request head
/// within `requestHeadTimeout` of the connection opening or of the previous response, or a body
/// slower than the minimum rate over any window. Sits after the HTTP decoder, so it sees whole
/// heads, the body's parts and its end; the time the server takes to answer is never counted
/// against the client.
///
/// The body's rate is judged window by window, not once over the whole body: the first window
/// (`bodyGrace`) and each later one (`bodyRateWindow`) must bring `minBodyBytesPerSecond` times
/// its length, or the rest of the body. A client that sends its body quickly and then stops is
/// closed within two windows, however large the length it declared.
///
/// Only the time the server was waiting for the client counts: from a `read` the pipeline asks
/// for to the data that answers it. A server behind on what it was sent (its handler not taking
/// the body, so no read is asked for: backpressure) is not waiting, and the window then needs
/// that much less. Without this an overloaded collector, its handlers starved of CPU, closed
/// honest uploads that had sent everything as "too slow", answering nothing.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    /// The one deadline in force (a head's or a body window's); all on the channel's event loop.
    private var deadline: Scheduled<Void>?
    /// The body's bytes still to come (its declared length less what came); nil for a chunked body.
    private var remaining: Int?
    /// What the current window must bring, and what it has brought.
    private var windowBrought = 0
    /// The current window's length, and how long in it the server has been waiting for data.
    private var windowLength: Duration = .zero
    private var waited: TimeAmount = .zero
    /// Since when a read the pipeline asked for has been waiting for data; nil when none is.
    private var waitingSince: NIODeadline?

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context, after: limits.requestHeadTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func read(context: ChannelHandlerContext) {
        if waitingSince == nil { waitingSince = context.eventLoop.now }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let since = waitingSince {
            waited = waited + (context.eventLoop.now - since)
            waitingSince = nil
        }
        switch unwrapInboundIn(data) {
        case .head(let head):
            let length = head.headerFields[.contentLength].flatMap(Int.init)
            if length == 0 || (length == nil && head.headerFields[.transferEncoding] == nil) {
                disarm()  // no body: nothing more to wait for until the answer is written
            } else {
                remaining = length
                startWindow(context, length: limits.bodyGrace)
            }
        case .body(let part):
            windowBrought += part.readableBytes
            remaining = remaining.map { max(0, $0 - part.readableBytes) }
        case .end:
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response) where response.status.kind != .informational:
            closing = response.headerFields[.connection]?.lowercased() == "close"
        case .end where closing:
            // A refusal that leaves the body unread (`Connection: close`): Hummingbird would read
            // and drop the rest of the body for as long as the client sends it. The client gets a
            // moment to read the answer, then the connection is closed, whatever it is sending.
            context.write(data, promise: promise)
            context.flush()
            arm(context, after: Self.linger)
            return
        case .end:
            // The answer is out: the client has its turn again.
            arm(context, after: limits.requestHeadTimeout)
        default:
            break
        }
        context.write(data, promise: promise)
    }

    /// How long a connection stays open after an answer that closes it (nginx's lingering close).
    static let linger: Duration = .seconds(2)
    /// Whether the answer being written closes the connection.
    private var closing = false

    private func startWindow(_ context: ChannelHandlerContext, length: Duration) {
        windowBrought = 0
        windowLength = length
        waited = .zero
        if waitingSince != nil { waitingSince = context.eventLoop.now }
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(length)) { [self] in
            guard windowBrought >= windowNeeds(context) else {
                deadline = nil
                context.channel.close(promise: nil)
                return
            }
            startWindow(context, length: limits.bodyRateWindow)
        }
    }

    /// What the window that ends now had to bring: the minimum rate times the time the server
    /// waited for the client in it (the whole window when it always wanted more), and no more
    /// than the rest of the body.
    private func windowNeeds(_ context: ChannelHandlerContext) -> Int {
        var waitedNow = waited
        if let since = waitingSince { waitedNow = waitedNow + (context.eventLoop.now - since) }
        let seconds = min(Double(waitedNow.nanoseconds) / 1e9, windowLength / .seconds(1))
        let needed = Double(max(1, limits.minBodyBytesPerSecond)) * seconds
        return min(remaining ?? Int.max, Int(min(needed.rounded(.up), Double(Int.max / 2))))
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
