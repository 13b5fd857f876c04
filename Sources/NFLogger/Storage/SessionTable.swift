import Foundation
@_spi(NFLogShared) import NFLogSupport

/// `sessions` and `contexts`: every event row points at its session, and every session at the
/// standard properties it was logged under, so those are stored once rather than per event.
final class SessionTable {
    private let insertContext: SQLiteStatement
    private let findContext: SQLiteStatement
    private let insertSession: SQLiteStatement
    private let findSession: SQLiteStatement
    private let setEnded: SQLiteStatement

    init(connection: SQLiteConnection) throws(SQLiteError) {
        insertContext = try connection.prepare("INSERT OR IGNORE INTO contexts (properties) VALUES (?)")
        findContext = try connection.prepare("SELECT id FROM contexts WHERE properties = ?")
        insertSession = try connection.prepare("INSERT INTO sessions (uuid, context_id, started_ms) VALUES (?, ?, ?) RETURNING id")
        findSession = try connection.prepare("SELECT id FROM sessions WHERE uuid = ?")
        setEnded = try connection.prepare("UPDATE sessions SET ended_ms = ? WHERE uuid = ?")
    }

    /// The row id of the context with these properties, inserting it if it is new.
    func contextRowID(properties json: String) throws(SQLiteError) -> Int64 {
        try insertContext.bind(json, at: 1)
        try insertContext.run()
        defer { findContext.reset() }
        try findContext.bind(json, at: 1)
        guard try findContext.step() else {
            throw SQLiteError(code: 1, message: "the context row vanished after insertion")
        }
        return findContext.int64(at: 0)
    }

    /// The row id of `session`, inserting it if it has no row yet.
    func sessionRowID(_ session: Session, contextRowID: Int64) throws(SQLiteError) -> Int64 {
        do {
            defer { findSession.reset() }
            try findSession.bind(session.id, at: 1)
            if try findSession.step() { return findSession.int64(at: 0) }
        }
        defer { insertSession.reset() }
        try insertSession.bind(session.id, at: 1)
        try insertSession.bind(contextRowID, at: 2)
        try insertSession.bind(session.startedMilliseconds, at: 3)
        guard try insertSession.step() else {
            throw SQLiteError(code: 1, message: "inserting a session returned no row id")
        }
        return insertSession.int64(at: 0)
    }

    /// Records when the session went to the background (`nil`: it came back and goes on).
    func setEnded(_ session: Session, at milliseconds: Int64?) throws(SQLiteError) {
        if let milliseconds { try setEnded.bind(milliseconds, at: 1) } else { try setEnded.bindNull(at: 1) }
        try setEnded.bind(session.id, at: 2)
        try setEnded.run()
    }
}
