/// The report was asked of a store whose hourly rollups do not yet hold every event it stored:
/// one from an earlier release, whose events `nflog-collector serve` is adding to them beside
/// uploads (a store of up to 10,000 events gets them as it opens). The report would undercount,
/// so it is not given; nothing changed.
package struct RollupsIncomplete: Error, Sendable, CustomStringConvertible {
    /// An upper bound on the stored events still to be added.
    package let remaining: Int64

    init(remaining: Int64) {
        self.remaining = remaining
    }

    package var description: String {
        "the store's hourly rollups are still being built from the events stored before them (at most \(remaining) to go): nflog-collector serve adds them beside uploads and logs \"the hourly rollups hold every stored event\" when done; ask again then"
    }
}
