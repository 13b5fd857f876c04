import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP/1.1 over a plain socket, for what URLSession will not send: a chunked body with no
/// `Content-Length`, header values past URLSession's checks. One request per connection.
enum RawHTTP {
    struct Response {
        let status: Int
        /// Lowercased names.
        let headers: [String: String]
        let body: [UInt8]
        /// Whether the body is all there (as long as its Content-Length).
        var isComplete: Bool { headers["content-length"].flatMap(Int.init).map { body.count >= $0 } ?? false }
    }

    /// The request line and headers of an upload with the test collector's key, without the
    /// length and the blank line.
    static let uploadHead = "POST /v1/events HTTP/1.1\r\nHost: x\r\n\(WireProtocol.appKeyHeader): \(TestCollector.appKey)\r\nContent-Type: application/json"

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `head` (the request line and headers, without the blank line) and `body` exactly as
    /// given, and reads one answer. The blocking socket calls run on a thread of their own: on the
    /// concurrency pool (two threads on a two-core machine) they would stall every other test.
    static func exchange(port: Int, head: String, body: [UInt8] = []) async throws -> Response {
        let bytes = Array((head + "\r\nConnection: close\r\n\r\n").utf8) + body
        return try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try parse(try roundTrip(port: port, bytes: bytes)) }) }.start()
        }
    }

    /// `chunks` as `Transfer-Encoding: chunked`, with the terminating empty chunk.
    static func chunked(_ chunks: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for chunk in chunks where !chunk.isEmpty {
            out += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + Array("\r\n".utf8)
        }
        return out + Array("0\r\n\r\n".utf8)
    }

    /// As a client sending `Expect: 100-continue` does: the head alone, then waits (up to `hangLimit`)
    /// for the server's first answer; then the body, and reads the final answer.
    static func expectingContinue(port: Int, head: String, body: [UInt8]) async throws -> (interim: Response, final: Response) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    let fd = try connected(port: port)
                    defer { close(fd) }
                    let headBytes = Array((head + "\r\nExpect: 100-continue\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n").utf8)
                    _ = headBytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
                    var received: [UInt8] = []
                    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                    while (try? parse(received)) == nil {
                        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                        guard n > 0 else { throw Failure(description: "no interim answer") }
                        received += buffer[0..<n]
                    }
                    let interim = try parse(received)
                    _ = body.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
                    // What came after the interim answer's blank line belongs to the final one.
                    let separator = Array("\r\n\r\n".utf8)
                    var rest = received
                    if let end = (0...max(0, rest.count - 4)).first(where: { Array(rest[$0..<min(rest.count, $0 + 4)]) == separator }) {
                        rest = Array(rest[(end + 4)...])
                    }
                    while (try? parse(rest)).map({ !$0.isComplete }) ?? true {
                        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                        guard n > 0 else { break }
                        rest += buffer[0..<n]
                    }
                    return (interim, try parse(rest))
                })
            }.start()
        }
    }

    /// Sends `bytes` and closes the connection without reading: a client that gives up mid-request.
    static func abandon(port: Int, bytes: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                continuation.resume(with: Result {
                    let fd = try connected(port: port)
                    defer { close(fd) }
                    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
                })
            }.start()
        }
    }

    private static func roundTrip(port: Int, bytes: [UInt8]) throws -> [UInt8] {
        let fd = try connected(port: port)
        defer { close(fd) }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            // The server may answer and close before reading everything (a refused body): read what it said.
            guard n > 0 else { break }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // Until the server closes, or as soon as one whole answer is in: a server that keeps the
        // connection open must not hold the test until the timeout.
        while (try? parse(received)).map({ !$0.isComplete }) ?? true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received += buffer[0..<n]
        }
        return received
    }

    /// A blocking socket connected to 127.0.0.1:`port`, with send and receive timeouts of
    /// `hangLimit`: a bound on a stuck test, not a margin (a loaded machine answers late).
    static func connected(port: Int) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: Int(hangLimit.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect() failed: errno \(errno)")
        }
        return fd
    }

    private static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = (0...max(0, bytes.count - 4)).first(where: { bytes.count >= 4 && Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw Failure(description: "no HTTP response (\(bytes.count) bytes)")
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusWords = lines[0].split(separator: " ")
        guard statusWords.count >= 2, let status = Int(statusWords[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init), length < body.count { body = Array(body.prefix(length)) }
        return Response(status: status, headers: headers, body: body)
    }
}
