import HTTPTypes
import Hummingbird
@_spi(NFLogShared) import NFLogSupport
import NIOCore

/// A refusal with the body docs/PROTOCOL.md promises: `{"error":{"message":"…","path":"…"}}`,
/// where `path` (present for batch violations) is the JSON path of what is wrong.
struct CollectorHTTPError: Error, HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String
    let path: String?
    let headers: HTTPFields

    init(_ status: HTTPResponse.Status, message: String, path: String? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.message = Self.bounded(message)
        self.path = path.map(Self.bounded)
        self.headers = headers
    }

    /// Messages and paths may quote the sender's JSON keys (up to the parser's string limit):
    /// an error body stays small whatever was sent.
    static let maxTextBytes = 512

    static func bounded(_ text: String) -> String {
        guard text.utf8.count > maxTextBytes else { return text }
        var kept = ""
        var bytes = 0
        for character in text {
            bytes += character.utf8.count
            guard bytes <= maxTextBytes - 3 else { break }
            kept.append(character)
        }
        return kept + "…"
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var out = JSONWriter(capacity: 64 + message.utf8.count)
        out.writeLiteral("{"); out.writeKey("error"); out.writeLiteral("{")
        out.writeKey("message"); out.writeString(message)
        if let path { out.writeLiteral(","); out.writeKey("path"); out.writeString(path) }
        out.writeLiteral("}}")
        var headers = self.headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: out.bytes)))
    }
}
