import HTTPTypes
@testable import NFLogCollector
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

/// The minimum body rate, window by window, on an EmbeddedChannel whose clock the test moves:
/// the rule is about time, so no wall clock decides it.
@Suite("The minimum body rate over each window")
struct BodyRateWindowTests {
    /// 1,000 bytes a second, judged over a first window of 2 s and then windows of 1 s.
    static func channel() throws -> EmbeddedChannel {
        var limits = ConnectionLimits()
        limits.minBodyBytesPerSecond = 1_000
        limits.bodyGrace = .seconds(2)
        limits.bodyRateWindow = .seconds(1)
        limits.requestHeadTimeout = .seconds(3_600)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ConnectionDeadlineHandler(limits: limits))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func head(length: Int?) -> HTTPRequestPart {
        var fields: HTTPFields = [:]
        if let length { fields[.contentLength] = String(length) } else { fields[.transferEncoding] = "chunked" }
        return .head(HTTPRequest(method: .post, scheme: nil, authority: "x", path: "/v1/events", headerFields: fields))
    }

    /// Body bytes from the client, then the server asking for more, as a pipeline reading
    /// freely does after each read.
    static func send(_ channel: EmbeddedChannel, _ bytes: Int) throws {
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(repeating: 0x20, count: bytes)))
        channel.read()
    }

    /// The request's head, then the server asking for its body.
    static func start(_ channel: EmbeddedChannel, length: Int?) throws {
        try channel.writeInbound(head(length: length))
        channel.read()
    }

    static func advance(_ channel: EmbeddedChannel, _ milliseconds: Int64) {
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(milliseconds))
    }

    @Test("Each window bringing its share keeps the body going; a window short of it closes the connection at its end")
    func shortWindow() throws {
        let channel = try Self.channel()
        try Self.start(channel, length: 100_000)
        try Self.send(channel, 2_000)  // the first window's 2 s × 1,000
        Self.advance(channel, 2_000)
        #expect(channel.isActive)
        try Self.send(channel, 1_000)
        Self.advance(channel, 1_000)
        #expect(channel.isActive)
        try Self.send(channel, 999)
        Self.advance(channel, 999)
        #expect(channel.isActive, "not before the window's end")
        Self.advance(channel, 1)
        #expect(!channel.isActive)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A body sent fast and then stopped is closed after the next window, whatever length it declared")
    func burstThenStall() throws {
        let channel = try Self.channel()
        try Self.start(channel, length: 4 * 1024 * 1024)
        try Self.send(channel, 1_000_000)
        Self.advance(channel, 2_000)
        #expect(channel.isActive)
        Self.advance(channel, 1_000)
        #expect(!channel.isActive)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A window needs no more than the rest of the body; a body that has ended is not timed")
    func restOfBody() throws {
        let channel = try Self.channel()
        try Self.start(channel, length: 2_500)
        try Self.send(channel, 2_000)
        Self.advance(channel, 2_000)
        try Self.send(channel, 500)  // all that is left, less than 1,000
        Self.advance(channel, 1_000)
        #expect(channel.isActive)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        Self.advance(channel, 60_000)
        #expect(channel.isActive, "the answer is the server's time, not the client's")
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A chunked body, of no declared length, must bring the full share of each window")
    func chunked() throws {
        let channel = try Self.channel()
        try Self.start(channel, length: nil)
        try Self.send(channel, 2_000)
        Self.advance(channel, 2_000)
        try Self.send(channel, 500)
        Self.advance(channel, 1_000)
        #expect(!channel.isActive)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A server behind on the body (its handler not taking it, so asking for no more) is not waiting for the client: that time is not held against it")
    func serverBehind() throws {
        let channel = try Self.channel()
        // The client sends a chunked body at once; the server, starved, takes none of it and
        // asks for nothing more for a minute: the client has nothing it can do.
        try channel.writeInbound(Self.head(length: nil))
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(repeating: 0x20, count: 1_500)))
        Self.advance(channel, 60_000)
        #expect(channel.isActive, "closed while the server was the one behind")
        // The server catches up and asks for more: from then on the windows count. Half a window
        // of waiting needs half a window's share.
        channel.read()
        Self.advance(channel, 500)
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(repeating: 0x20, count: 500)))  // and behind again
        Self.advance(channel, 500)  // the window ends: 0.5 s waited, 500 bytes brought
        #expect(channel.isActive)
        channel.read()
        Self.advance(channel, 1_000)  // a whole window waited, nothing brought
        #expect(!channel.isActive)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
}
