public import NFLogger

/// The transaction of the request a task is handling, set by ``NFLoggerMiddleware``: the
/// request's server span in the transaction of its `traceparent` (or in a new transaction).
///
/// ```swift
/// router.get("cart") { request, context in
///     if let transaction = NFLoggerServer.current {
///         logger.logEvent(name: "cart.read", in: transaction)
///     }
///     …
/// }
/// ```
public enum NFLoggerServer {
    /// The current request's transaction, with its server span as parent; `nil` outside a
    /// request, and when the middleware recorded no span and the request carried no `traceparent`.
    @TaskLocal public static var current: TransactionContext?
}
