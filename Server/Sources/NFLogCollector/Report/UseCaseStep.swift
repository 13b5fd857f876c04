/// One step of a use case's funnel: a named event logged against its runs (docs/PROTOCOL.md,
/// "Transactions": the run's transaction id, the run's span as `parent_span`, by the app instance
/// that logged the run).
public struct UseCaseStep: Sendable, Equatable, Codable {
    /// The step's event name.
    public let name: String
    /// Runs of the use case with at least one event of this name.
    public let reached: Int
    /// Abandoned runs whose last step (the latest device timestamp; ties: the greater name in
    /// byte order) was this one: where users left.
    public let left: Int

    public init(name: String, reached: Int, left: Int) {
        self.name = name
        self.reached = reached
        self.left = left
    }
}
