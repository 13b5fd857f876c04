public import Foundation

extension SQLiteStatement {
    /// Binds a UUID as its 16 raw bytes, the compact form both ends store.
    @_spi(NFLogShared) public func bind(_ id: UUID, at index: Int32) throws(SQLiteError) {
        var failure: SQLiteError?
        withUnsafeBytes(of: id.uuid) { bytes in
            do throws(SQLiteError) { try bindBlob(bytes, at: index) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Reads a UUID stored as 16 raw bytes; any other value reads as the nil UUID.
    @_spi(NFLogShared) public func uuid(at column: Int32) -> UUID {
        guard let bytes = blob(at: column), bytes.count == 16 else { return .nilUUID }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension UUID {
    /// The nil UUID (all zero bits), read where a stored id is missing or malformed.
    @_spi(NFLogShared) public static let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
