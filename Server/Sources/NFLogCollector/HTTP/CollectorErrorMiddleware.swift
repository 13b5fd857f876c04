import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// Gives every refusal the documented body `{"error":{"message":"…"}}` and nothing more: the
/// router's own errors (no such endpoint) get a plain message, and an error the routes did not
/// map becomes a bare 500 whose details go to the log, never to the client, so no type name,
/// source path or stack trace reaches a response.
struct CollectorErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as CollectorHTTPError {
            throw error
        } catch let error as HTTPError {
            // Hummingbird's own (404 for an unknown path): its status and headers, our words.
            throw CollectorHTTPError(error.status, message: Self.message(for: error.status), headers: error.headers)
        } catch let error as any HTTPResponseError {
            throw CollectorHTTPError(error.status, message: Self.message(for: error.status))
        } catch where Self.isClientsDoing(error) {
            // A body cut short or malformed, a client gone: its business, not the server's fault,
            // and a client must not be able to flood the log. (The answer rarely reaches it.)
            context.logger.debug("the request ended before it could be read: \(request.method) \(request.uri.path): \(error)")
            throw CollectorHTTPError(.badRequest, message: "the request ended early or could not be parsed")
        } catch {
            context.logger.error("unexpected error answering \(request.method) \(request.uri.path): \(String(reflecting: error))")
            throw CollectorHTTPError(.internalServerError, message: "internal error; the collector's log has the details")
        }
    }

    /// Whether an error reading the request is the client's doing: it closed or reset the
    /// connection mid-request, or sent what HTTP/1.1 cannot parse.
    static func isClientsDoing(_ error: any Error) -> Bool {
        switch error {
        case is HTTPParserError: true
        case let error as ChannelError: [.ioOnClosedChannel, .eof, .inputClosed, .outputClosed, .alreadyClosed].contains(error)
        case let error as IOError: [ECONNRESET, EPIPE, ETIMEDOUT].contains(error.errnoCode)
        default: false
        }
    }

    static func message(for status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "no such endpoint"
        case .methodNotAllowed: "this method is not allowed on this endpoint"
        case .contentTooLarge: "the body is too large"
        default: status.reasonPhrase.isEmpty ? "request refused" : status.reasonPhrase.lowercased()
        }
    }
}
