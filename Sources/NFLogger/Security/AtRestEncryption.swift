import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Matches a database to the configured encryption key when it is opened.
///
/// A database remembers that it is encrypted (a sealed check value in the `encryption` table), so
/// opening it with another key, or with none, is told apart from opening it with the right one,
/// and its events are never read as garbage nor written under two keys.
enum AtRestEncryption {
    /// The `SQLiteError` code for "this database needs another key": SQLite's AUTH primary code
    /// with an extended part of our own, so it is neither corruption nor a full disk.
    static let keyMismatchCode: Int32 = 23 | (0x4E << 8)

    static func isKeyMismatch(_ error: SQLiteError) -> Bool { error.code == keyMismatchCode }

    /// The code for "encrypted, and no key is configured": most likely the key is not available
    /// yet (a keychain before first unlock), so the database is left alone and calls fail until it is.
    static let keyMissingCode: Int32 = 23 | (0x4B << 8)

    /// Checks the database against `cipher` (or its absence). A database that was never encrypted
    /// and now has a key gets its stored parameters sealed in place, then is rewritten (VACUUM)
    /// so no plaintext stays behind in free pages or the log.
    /// - Throws: a key-mismatch `SQLiteError` when the database was encrypted with another key; a
    ///   key-missing one when it is encrypted and no key is configured; and a plain one when it
    ///   should be sealed but `othersHaveItOpen` (they may be writing without a key).
    static func prepare(_ connection: SQLiteConnection, cipher: ParameterCipher?,
                        othersHaveItOpen: () throws(SQLiteError) -> Bool) throws(SQLiteError) {
        let stored = try connection.prepare("SELECT key_check FROM encryption WHERE id = 1").collect { $0.blob(at: 0) }.first ?? nil
        switch (cipher, stored) {
        case (nil, nil):
            return
        case (nil, .some):
            throw SQLiteError(code: keyMissingCode, message: "the database is encrypted and no encryption key is configured; it is left as it is until one is")
        case (let cipher?, let check?):
            guard cipher.verify(keyCheck: check) else {
                throw SQLiteError(code: keyMismatchCode, message: "the database was encrypted with a different key")
            }
            if try connection.scalarInt("SELECT count(*) FROM encryption WHERE id = \(scrubPendingRow)") > 0 {
                scrub(connection)  // an earlier VACUUM did not finish (a full disk, a crash)
            }
        case (let cipher?, nil):
            guard try !othersHaveItOpen() else {
                throw SQLiteError(code: 5, message: "another process has the database open without encryption; it is sealed once that process closes it")
            }
            try encryptExisting(connection, cipher)
        }
    }

    /// The `encryption` row that says the file still needs rewriting after its values were sealed.
    static let scrubPendingRow = 2

    private static func encryptExisting(_ connection: SQLiteConnection, _ cipher: ParameterCipher) throws(SQLiteError) {
        // Sealed and marked encrypted in one transaction, so no state ever mixes the two; the
        // rewrite that follows is owed until it has succeeded.
        try connection.transaction { () throws(SQLiteError) in
            try seal(connection, cipher, table: "point_events", column: "parameters", slot: .parameters)
            try seal(connection, cipher, table: "span_events", column: "parameters", slot: .parameters)
            try seal(connection, cipher, table: "span_events", column: "end_parameters", slot: .endParameters)
            try seal(connection, cipher, table: "aggregate_events", column: "parameters", slot: .parameters)
            try seal(connection, cipher, table: "quarantined_events", column: "payload", slot: .quarantined)
            let insert = try connection.prepare("INSERT INTO encryption (id, key_check) VALUES (1, ?), (\(scrubPendingRow), NULL)")
            try insert.bindBlob(try check(cipher), at: 1)
            try insert.run()
        }
        scrub(connection)
    }

    /// Plaintext may survive in free pages and in the slack of pages still in use (deleted cells,
    /// when SQLite was built without secure_delete): rebuild the file, fold the log into it and cut
    /// the log to nothing. The debt is cleared only when all of that succeeded.
    private static func scrub(_ connection: SQLiteConnection) {
        do {
            try connection.execute("VACUUM")
            // (busy, log frames, frames checkpointed): busy means a reader kept old frames alive.
            let busy = try connection.prepare("PRAGMA wal_checkpoint(TRUNCATE)").collect { $0.int64(at: 0) }.first ?? 1
            guard busy == 0 else { return }
            try connection.execute("DELETE FROM encryption WHERE id = \(scrubPendingRow)")
        } catch {
            // Still owed, tried at the next open; the database is consistent and encrypted, so this open goes on.
        }
    }

    private static func check(_ cipher: ParameterCipher) throws(SQLiteError) -> [UInt8] {
        do { return try cipher.keyCheck() } catch {
            throw SQLiteError(code: 1, message: "encryption: \(error)")
        }
    }

    /// Seals every plaintext value of one column (values already sealed, by an earlier attempt
    /// whose VACUUM failed, are left as they are).
    private static func seal(_ connection: SQLiteConnection, _ cipher: ParameterCipher, table: String, column: String,
                             slot: ParameterCipher.Slot) throws(SQLiteError) {
        let rows = try connection.prepare("SELECT id, uuid, \(column) FROM \(table) WHERE \(column) IS NOT NULL")
            .collect { ($0.int64(at: 0), $0.uuid(at: 1), $0.blob(at: 2) ?? []) }
            .filter { cipher.isSealed($0.2, id: $0.1, slot: slot) == false }
        let update = try connection.prepare("UPDATE \(table) SET \(column) = ? WHERE id = ?")
        for (rowID, id, plaintext) in rows {
            try update.bindBlob(try cipher.sealForStorage(plaintext, id: id, slot: slot), at: 1)
            try update.bind(rowID, at: 2)
            try update.run()
        }
    }
}
