/// Why a body could not be read as the wire format: what is wrong, and where (`events[3].uuid`).
package struct WireFormatError: Error, Sendable, CustomStringConvertible {
    /// The JSON path of the value at fault, as the collector writes it; `nil` for the whole body.
    package let path: String?
    package let reason: String

    package init(path: String?, _ reason: String) {
        self.path = path
        self.reason = reason
    }

    package var description: String { path.map { "\($0): \(reason)" } ?? reason }
}
