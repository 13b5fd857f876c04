import Foundation
public import Hummingbird
import HTTPTypes
@_spi(NFLogShared) public import NFLogger
@_spi(NFLogShared) import NFLogSupport
import NFLoggerInstrumentation
import Tracing

/// A Hummingbird middleware that records each request as an NFLogger server span named
/// `server.request` (type `server`), with the parameters `method` and `path` (without the query)
/// and, at the end, `status` (and `error` if the handler threw).
///
/// The span is started in the transaction of the request's W3C `traceparent` header, as a
/// child of the caller's span: the app's span that made the request then contains the server's
/// time (docs/PROTOCOL.md, "Transactions"). Without a valid header, the span begins a
/// transaction of its own.
///
/// Handlers reach the request's transaction through ``NFLoggerServer/current``, and through
/// `ServiceContext.current` (`nfloggerTransaction`): `NFLogHandler` logs their swift-log records
/// into it, and `NFLoggerTracer` starts their spans in it.
///
/// While the policy's `auto.tracing` is `false` it records no span; handlers still get the
/// caller's transaction, if the request carried one. The span ends when the handler returns
/// (before the response body is written).
public struct NFLoggerMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The span's name.
    public static var spanName: String { "server.request" }
    /// The span's type.
    public static var spanType: String { "server" }

    /// The logger the spans go to.
    public let logger: NFLogger

    /// A middleware recording to `logger`.
    public init(logger: NFLogger) {
        self.logger = logger
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let caller = Self.traceparent(request.headers).flatMap(TransactionContext.init(traceparent:))
        let end: (@Sendable (LogParameters, String?) -> Void)?
        let transaction: TransactionContext?
        if !logger.automaticSources.tracing {
            (end, transaction) = (nil, caller)
        } else {
            let parameters: LogParameters = ["method": request.method.rawValue, "path": request.uri.path]
            if let caller {
                let span: SpanHandle = logger.startEvent(name: Self.spanName, type: Self.spanType, parameters: parameters, in: caller)
                (end, transaction) = ({ parameters, _ in span.end(parameters: parameters) }, span.context)
            } else {
                let root: TransactionHandle = logger.beginTransaction(name: Self.spanName, type: Self.spanType, parameters: parameters)
                end = { parameters, failure in
                    root.end(outcome: failure.map { .failed(reason: $0) } ?? .completed, parameters: parameters)
                }
                transaction = root.context
            }
        }
        var serviceContext = ServiceContext.current ?? .topLevel
        if let transaction { serviceContext.nfloggerTransaction = transaction }
        do {
            let response = try await NFLoggerServer.$current.withValue(transaction) {
                try await ServiceContext.$current.withValue(serviceContext) {
                    try await next(request, context)
                }
            }
            let status = Int(response.status.code)
            end?(["status": status], status >= 500 ? "status \(status)" : nil)
            return response
        } catch {
            let status = Int((error as? any HTTPResponseError)?.status.code ?? 500)
            let text = String(describing: error)
            // At most 1 KiB (a character cut in two becomes U+FFFD).
            let description = text.utf8.count <= 1_024 ? text : String(decoding: text.utf8.prefix(1_024), as: UTF8.self)
            end?(["status": status, "error": description], status >= 500 ? description : nil)
            throw error
        }
    }

    /// The request's `traceparent`, if it has exactly one.
    static func traceparent(_ headers: HTTPFields) -> String? {
        guard let name = HTTPField.Name(NFLoggerTracer.traceparentHeader) else { return nil }
        let values = headers[values: name]
        return values.count == 1 ? values[0].trimmingCharacters(in: .whitespaces) : nil
    }
}
