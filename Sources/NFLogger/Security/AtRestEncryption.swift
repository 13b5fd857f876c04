import Foundation
import NFLogSupport

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

    /// Checks the database against `cipher` (or its absence). A database that was never encrypted
    /// and now has a key gets its stored parameters sealed in place, then is rewritten (VACUUM)
    /// so no plaintext stays behind in free pages or the log.
    /// - Throws: a key-mismatch `SQLiteError` when the database was encrypted with another key, or
    ///   is encrypted and no key is configured.
    static func prepare(_ connection: SQLiteConnection, cipher: ParameterCipher?) throws(SQLiteError) {
        let stored = try connection.prepare("SELECT key_check FROM encryption WHERE id = 1").collect { $0.blob(at: 0) }.first ?? nil
        switch (cipher, stored) {
        case (nil, nil):
            return
        case (nil, .some):
            throw SQLiteError(code: keyMismatchCode, message: "the database is encrypted and no encryption key is configured")
        case (let cipher?, let check?):
            guard cipher.verify(keyCheck: check) else {
                throw SQLiteError(code: keyMismatchCode, message: "the database was encrypted with a different key")
            }
        case (let cipher?, nil):
            try encryptExisting(connection, cipher)
        }
    }

    private static func encryptExisting(_ connection: SQLiteConnection, _ cipher: ParameterCipher) throws(SQLiteError) {
        let freePages = try connection.scalarInt("PRAGMA freelist_count")
        let sealed = try connection.transaction { () throws(SQLiteError) -> Int in
            var count = try seal(connection, cipher, table: "point_events", column: "parameters", slot: .parameters)
            count += try seal(connection, cipher, table: "span_events", column: "parameters", slot: .parameters)
            count += try seal(connection, cipher, table: "span_events", column: "end_parameters", slot: .endParameters)
            count += try seal(connection, cipher, table: "quarantined_events", column: "payload", slot: .quarantined)
            let insert = try connection.prepare("INSERT INTO encryption (id, key_check) VALUES (1, ?)")
            try insert.bindBlob(try check(cipher), at: 1)
            try insert.run()
            return count
        }
        if sealed > 0 || freePages > 0 {
            // Plaintext may survive in free pages and in the slack of rewritten pages: rebuild the
            // file, then fold the log into it and cut the log to nothing.
            try connection.execute("VACUUM")
        }
        _ = try? connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    private static func check(_ cipher: ParameterCipher) throws(SQLiteError) -> [UInt8] {
        do { return try cipher.keyCheck() } catch {
            throw SQLiteError(code: 1, message: "encryption: \(error)")
        }
    }

    /// Seals every plaintext value of one column. Returns how many.
    private static func seal(_ connection: SQLiteConnection, _ cipher: ParameterCipher, table: String, column: String,
                             slot: ParameterCipher.Slot) throws(SQLiteError) -> Int {
        let rows = try connection.prepare("SELECT id, uuid, \(column) FROM \(table) WHERE \(column) IS NOT NULL")
            .collect { ($0.int64(at: 0), $0.uuid(at: 1), $0.blob(at: 2) ?? []) }
        let update = try connection.prepare("UPDATE \(table) SET \(column) = ? WHERE id = ?")
        for (rowID, id, plaintext) in rows {
            let sealed: [UInt8]
            do { sealed = try cipher.seal(plaintext, id: id, slot: slot) } catch {
                throw SQLiteError(code: 1, message: "encryption: \(error)")
            }
            try update.bindBlob(sealed, at: 1)
            try update.bind(rowID, at: 2)
            try update.run()
        }
        return rows.count
    }
}
