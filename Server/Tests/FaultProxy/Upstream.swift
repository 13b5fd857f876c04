import NIOCore
import NIOHTTP1
import NIOPosix

/// One request forwarded to the upstream on a connection of its own, its answer read in full.
enum Upstream {
    struct Answer {
        let head: HTTPResponseHead
        let body: ByteBuffer
    }

    struct ClosedEarly: Error {}

    static func forward(_ request: HTTPRequestHead, body: ByteBuffer, host: String, port: Int) async throws -> Answer {
        let connection = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await connection.executeThenClose { inbound, outbound in
            var head = request
            // The body was read whole: it goes with a length, on a connection used once.
            head.headers.remove(name: "transfer-encoding")
            head.headers.remove(name: "connection")
            head.headers.remove(name: "keep-alive")
            head.headers.replaceOrAdd(name: "content-length", value: String(body.readableBytes))
            head.headers.add(name: "connection", value: "close")
            try await outbound.write(.head(head))
            if body.readableBytes > 0 { try await outbound.write(.body(.byteBuffer(body))) }
            try await outbound.write(.end(nil))
            var answerHead: HTTPResponseHead?
            var answerBody = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let value): answerHead = value
                case .body(var chunk): answerBody.writeBuffer(&chunk)
                case .end:
                    guard let answerHead else { throw ClosedEarly() }
                    return Answer(head: answerHead, body: answerBody)
                }
            }
            throw ClosedEarly()
        }
    }

    /// The answer as bytes on the client's connection: the upstream's status and headers, the
    /// body with its length, and whether the connection stays open.
    static func serialize(_ answer: Answer, keepAlive: Bool, headRequest: Bool) -> ByteBuffer {
        var text = "HTTP/1.1 \(answer.head.status.code) \(answer.head.status.reasonPhrase)\r\n"
        let hopByHop: Set<String> = ["connection", "keep-alive", "transfer-encoding", "content-length"]
        for (name, value) in answer.head.headers where !hopByHop.contains(name.lowercased()) {
            text += "\(name): \(value)\r\n"
        }
        let length = headRequest ? (answer.head.headers.first(name: "content-length") ?? "0") : String(answer.body.readableBytes)
        text += "content-length: \(length)\r\nconnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        var bytes = ByteBuffer(string: text)
        if !headRequest {
            var body = answer.body
            bytes.writeBuffer(&body)
        }
        return bytes
    }

    /// A short answer made by the proxy itself.
    static func made(status: HTTPResponseStatus, headers: [(String, String)] = [], message: String, keepAlive: Bool) -> ByteBuffer {
        let body = #"{"error":{"message":"\#(message)"}}"#
        var text = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\ncontent-type: application/json\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "content-length: \(body.utf8.count)\r\nconnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n\(body)"
        return ByteBuffer(string: text)
    }
}
