/// How a transaction ended: ``TransactionHandle/end(outcome:parameters:completion:)``.
public enum TransactionOutcome: Sendable, Equatable {
    /// The user finished the use case.
    case completed
    /// The user left it (closed the form, went back); the reason is optional.
    case cancelled(reason: String? = nil)
    /// It could not be finished (a server error, a validation failure).
    case failed(reason: String)

    /// `end_parameters` the transaction's span ends with (docs/PROTOCOL.md, "Transactions").
    var parameters: LogParameters {
        switch self {
        case .completed: ["outcome": "completed", "completed": true]
        case .cancelled(let reason):
            reason.map { ["outcome": "cancelled", "completed": false, "reason": $0] } ?? ["outcome": "cancelled", "completed": false]
        case .failed(let reason): ["outcome": "failed", "completed": false, "reason": reason]
        }
    }
}
