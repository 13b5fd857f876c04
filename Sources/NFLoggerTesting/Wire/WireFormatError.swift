/// Why a body could not be read as the wire format: what is wrong, and where (`events[3].uuid`).
@_spi(NFLogShared) public struct WireFormatError: Error, Sendable, CustomStringConvertible {
    /// The JSON path of the value at fault, as the collector writes it; `nil` for the whole body.
    @_spi(NFLogShared) public let path: String?
    @_spi(NFLogShared) public let reason: String

    @_spi(NFLogShared) public init(path: String?, _ reason: String) {
        self.path = path
        self.reason = reason
    }

    @_spi(NFLogShared) public var description: String { path.map { "\($0): \(reason)" } ?? reason }
}
