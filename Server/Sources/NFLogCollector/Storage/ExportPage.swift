/// One page of an app's export: ``EventStore/exportPage(app:after:limit:)``.
package struct ExportPage: Sendable, Equatable {
    /// The events as JSON lines, the format of `nflog-collector export`, each ending in `\n`.
    package let lines: [UInt8]
    /// How many events (lines) the page holds.
    package let count: Int
    /// The row id of the page's last event, to pass as `after` for the next page; `nil` when the
    /// page is empty (there is nothing after `after`).
    package let last: Int64?

    package init(lines: [UInt8], count: Int, last: Int64?) {
        self.lines = lines
        self.count = count
        self.last = last
    }
}
