import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A reverse proxy on 127.0.0.1 that breaks a seeded share of the requests passing through it,
/// on the real sockets: refusals with `Retry-After`, connections closed, reset, half-closed or
/// stalled at each stage of an exchange, answers trickled a byte at a time.
///
/// ```swift
/// let proxy = FaultProxy(FaultProxyConfiguration(upstreamPort: collectorPort))
/// try await proxy.start()
/// // point the client at proxy.url …
/// print(proxy.counts())
/// await proxy.shutdown()
/// ```
public final class FaultProxy: Sendable {
    typealias ClientConnection = NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>

    private let configuration: FaultProxyConfiguration
    private let decider: FaultDecider
    /// The listener, its accept loop, and every open client connection, so `shutdown()` can close
    /// them all. Invariant: only touched under the mutex, never across an await.
    private let running = Mutex<(server: (any Channel)?, loop: Task<Void, Never>?, connections: [ObjectIdentifier: any Channel])>((nil, nil, [:]))
    private let boundPort = Atomic<Int>(0)

    public init(_ configuration: FaultProxyConfiguration) {
        self.configuration = configuration
        decider = FaultDecider(configuration)
    }

    /// The port it listens on (0 before `start()`).
    public var port: Int { boundPort.load(ordering: .acquiring) }

    /// `http://127.0.0.1:PORT`.
    public var url: URL {
        var components = URLComponents()
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = port
        return components.url ?? URL(fileURLWithPath: "/")
    }

    public func counts() -> FaultProxyCounts { decider.counts }

    /// Listens on 127.0.0.1 and serves until `shutdown()`.
    public func start() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            .bind(host: "127.0.0.1", port: configuration.listenPort) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    return try ClientConnection(wrappingChannelSynchronously: channel,
                                                configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        boundPort.store(server.channel.localAddress?.port ?? 0, ordering: .releasing)
        let loop = Task<Void, Never> {
            try? await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        }
        running.withLock { $0.server = server.channel; $0.loop = loop }
    }

    /// Stops listening and closes every connection, stalled ones included; returns when all
    /// their work has ended.
    public func shutdown() async {
        let (server, loop, connections) = running.withLock { running in
            defer { running = (nil, nil, [:]) }
            return running
        }
        try? await server?.close()
        for connection in connections.values { connection.close(promise: nil) }
        await loop?.value
    }

    private var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    // MARK: One client connection

    private func serve(_ connection: ClientConnection) async {
        let channel = connection.channel
        decider.connectionAccepted()
        running.withLock { $0.connections[ObjectIdentifier(channel)] = channel }
        defer { _ = running.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(channel)) } }
        try? await connection.executeThenClose { inbound, outbound in
            var parts = inbound.makeAsyncIterator()
            // Requests one after another on the connection (keep-alive); returning closes it.
            while let part = try await parts.next() {
                guard case .head(let head) = part else { continue }
                let fault = decider.decide(method: head.method.rawValue, now: now)
                configuration.trace?(decider.counts.requests, head.method.rawValue, head.uri, fault)
                if fault == .closeBeforeBody { return decider.injected(.closeBeforeBody) }
                var body = ByteBuffer()
                var complete = false
                reading: while let part = try await parts.next() {
                    switch part {
                    case .head: return  // a head before the last request ended: not HTTP we can relay
                    case .body(var chunk):
                        if fault == .resetMidRequest { return try await reset(channel) }
                        body.writeBuffer(&chunk)
                    case .end:
                        complete = true
                        break reading
                    }
                }
                guard complete else { return }
                if fault == .resetMidRequest { return try await reset(channel) }  // a request without a body
                let keepAlive = head.isKeepAlive
                switch fault {
                case .serviceUnavailable?, .tooManyRequests?:
                    decider.injected(fault ?? .serviceUnavailable)
                    decider.retryAfterGiven(seconds: configuration.retryAfterSeconds, now: now)
                    try await outbound.write(Upstream.made(
                        status: fault == .serviceUnavailable ? .serviceUnavailable : .tooManyRequests,
                        headers: [("retry-after", String(configuration.retryAfterSeconds))],
                        message: "injected by the fault proxy", keepAlive: keepAlive))
                    if !keepAlive { return }
                    continue
                case .stall?:
                    decider.injected(.stall)
                    return await holdOpen(channel)
                default:
                    break
                }
                let answer: Upstream.Answer
                do {
                    answer = try await Upstream.forward(head, body: body, host: configuration.upstreamHost, port: configuration.upstreamPort)
                } catch {
                    decider.upstreamFailed()
                    try await outbound.write(Upstream.made(status: .badGateway, message: "the upstream did not answer: \(error)", keepAlive: false))
                    return
                }
                decider.forwarded()
                let bytes = Upstream.serialize(answer, keepAlive: keepAlive, headRequest: head.method == .HEAD)
                switch fault {
                case .dropAfterUpstream?:
                    return decider.injected(.dropAfterUpstream)
                case .dropMidBody?:
                    decider.injected(.dropMidBody)
                    return try await outbound.write(Self.firstPart(of: bytes, answer: answer))
                case .halfClose?:
                    decider.injected(.halfClose)
                    try await outbound.write(Self.firstPart(of: bytes, answer: answer))
                    outbound.finish()  // FIN: our side is done writing; the client's side stays open
                    return await holdOpen(channel)
                case .slowResponse?:
                    decider.injected(.slowResponse)
                    for index in bytes.readerIndex..<bytes.writerIndex {
                        try await outbound.write(bytes.getSlice(at: index, length: 1) ?? ByteBuffer())
                        try await Task.sleep(for: configuration.slowByteInterval)
                    }
                default:
                    try await outbound.write(bytes)
                }
                decider.answered()
                if !keepAlive { return }
            }
        }
    }

    /// The answer's head and half its body: enough for the client to start reading it.
    private static func firstPart(of bytes: ByteBuffer, answer: Upstream.Answer) -> ByteBuffer {
        let headLength = bytes.readableBytes - answer.body.readableBytes
        return bytes.getSlice(at: bytes.readerIndex, length: headLength + answer.body.readableBytes / 2) ?? ByteBuffer()
    }

    /// Closes with a TCP reset instead of a FIN: `SO_LINGER` on with a zero timeout.
    private func reset(_ channel: any Channel) async throws {
        decider.injected(.resetMidRequest)
        try await (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
    }

    /// Keeps the connection open, saying nothing, until the client closes it, the stall limit
    /// passes, or the proxy shuts down.
    private func holdOpen(_ channel: any Channel) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await channel.closeFuture.get() }
            group.addTask { [limit = configuration.stallLimit] in
                try? await Task.sleep(for: limit)
                channel.close(promise: nil)  // ends the other task too
            }
            await group.next()
            group.cancelAll()
        }
    }
}
