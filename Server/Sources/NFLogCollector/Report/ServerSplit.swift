/// Where a use case's completed transactions spent their time, for those whose app called its
/// backend (docs/PROTOCOL.md, "Transactions"): in the app, on the network, on the server. Each
/// is summarised over the same transactions, one value per transaction.
public struct ServerSplit: Sendable, Equatable, Codable {
    /// Completed transactions of the use case with at least one client call joined to a server
    /// span: how many values each summary holds.
    public let transactions: Int
    /// The transaction's duration less its client calls' durations (at least 0).
    public let client: DurationSummary
    /// Summed over its client calls: the call's duration less its server span's (at least 0).
    public let network: DurationSummary
    /// Summed over its client calls: the duration of the call's server span (the longest, if
    /// the backend logged several under it).
    public let server: DurationSummary

    public init(transactions: Int, client: DurationSummary, network: DurationSummary, server: DurationSummary) {
        self.transactions = transactions
        self.client = client
        self.network = network
        self.server = server
    }
}
