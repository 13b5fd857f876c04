import HTTPTypes
import Hummingbird

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
        } catch {
            context.logger.error("unexpected error answering \(request.method) \(request.uri.path): \(String(reflecting: error))")
            throw CollectorHTTPError(.internalServerError, message: "internal error; the collector's log has the details")
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
