import Foundation

/// Why a ``JSONLinesOutput`` could not take a batch: what it was doing, on which path, and the
/// system's reason. A failure that may pass (the batch is delivered again after a backoff).
struct JSONLinesFileError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// What failed, as a verb phrase: "create the directory", "sync".
    let operation: String
    let path: String
    let reason: String

    /// With the system's message for `errno`.
    init(_ operation: String, path: String, errno code: Int32) {
        self.init(operation, path: path, reason: String(cString: strerror(code)))
    }

    init(_ operation: String, path: String, reason: String) {
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    var description: String { "cannot \(operation) \(path): \(reason)" }
    var errorDescription: String? { description }
}
