/// What the PostgreSQL store refuses or cannot do, in words an operator can act on. Errors of the
/// database itself come as postgres-nio's `PSQLError`.
package enum PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL, the password file or a setting is wrong.
    case configuration(String)
    /// The store was closed.
    case closed
    /// Not implemented on PostgreSQL yet (the SQLite store has it).
    case unsupported(String)

    package var description: String {
        switch self {
        case .configuration(let message): "PostgreSQL store: \(message)"
        case .closed: "PostgreSQL store: the store is closed"
        case .unsupported(let what): "PostgreSQL store: \(what) is not implemented on PostgreSQL yet"
        }
    }
}
