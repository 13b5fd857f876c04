import Foundation
@_spi(NFLogShared) import NFLogSupport

/// What the collector should hear about the device itself, waiting for the next batch to carry
/// it: prune counts by event name (`pruned_counts`) and notes (`device_notes`): database resets,
/// and one note per event the collector refused and the device quarantined. A batch takes them into its diagnostic record; a batch that is split or
/// refused puts them back, so none is lost and none is told twice.
///
/// Runs inside its caller's transaction on the RequestManager's queue, like the Outbox.
final class DiagnosticRecords {
    private let connection: SQLiteConnection
    private let readPruned: SQLiteStatement
    private let readNotes: SQLiteStatement
    private let addPruned: SQLiteStatement
    private let addNote: SQLiteStatement
    private let setDiagnostics: SQLiteStatement

    /// The kinds of `device_notes` rows.
    static let databaseResetKind = "database_reset"
    static let quarantinedKind = "quarantined"

    init(connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        readPruned = try connection.prepare("SELECT name, count FROM pruned_counts ORDER BY name")
        readNotes = try connection.prepare("SELECT kind, detail, at_ms FROM device_notes ORDER BY id")
        addPruned = try connection.prepare("""
            INSERT INTO pruned_counts (name, count) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET count = count + excluded.count
            """)
        addNote = try connection.prepare("INSERT INTO device_notes (kind, detail, at_ms) VALUES (?, ?, ?)")
        setDiagnostics = try connection.prepare("UPDATE upload_batches SET diagnostics = ? WHERE id = ?")
    }

    /// Whether any prune count or note is waiting.
    func isWaiting() throws(SQLiteError) -> Bool {
        let pruned = try readPruned.collect { _ in true }
        if !pruned.isEmpty { return true }
        return !(try readNotes.collect { _ in true }).isEmpty
    }

    /// Moves the waiting prune counts and device notes into the batch's diagnostic record.
    func take(into batchRowID: Int64) throws(SQLiteError) -> [UInt8]? {
        let pruned = try readPruned.collect { ($0.text(at: 0) ?? "", $0.int64(at: 1)) }
        let notes = try readNotes.collect { ($0.text(at: 0) ?? "", $0.text(at: 1) ?? "", $0.int64(at: 2)) }
        guard !pruned.isEmpty || !notes.isEmpty else { return nil }
        let json = BatchEncoder.diagnostics(pruned: pruned,
                                            resets: notes.filter { $0.0 == Self.databaseResetKind }.map { ($0.2, $0.1) },
                                            quarantined: Int64(notes.count { $0.0 == Self.quarantinedKind }))
        try setDiagnostics.bindText(json, at: 1)
        try setDiagnostics.bind(batchRowID, at: 2)
        try setDiagnostics.run()
        try connection.execute("DELETE FROM pruned_counts; DELETE FROM device_notes")
        return json
    }

    /// Puts a batch's diagnostic record back, for the next batch to carry.
    func restore(_ json: [UInt8]?) throws(SQLiteError) {
        guard let json, let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else { return }
        for (name, count) in object["pruned"] as? [String: Any] ?? [:] {
            guard let count = (count as? NSNumber)?.int64Value else { continue }
            try addPruned.bind(name, at: 1)
            try addPruned.bind(count, at: 2)
            try addPruned.run()
        }
        for reset in object["database_resets"] as? [[String: Any]] ?? [] {
            try note(kind: Self.databaseResetKind, detail: reset["reason"] as? String ?? "", at: (reset["at"] as? NSNumber)?.int64Value ?? 0)
        }
        // Bounded by what was taken: one note per event quarantined since the last report.
        let quarantined = (object["quarantined"] as? NSNumber)?.intValue ?? 0
        for _ in 0..<max(quarantined, 0) { try note(kind: Self.quarantinedKind, detail: "", at: 0) }
    }

    /// Notes something the collector should hear about (a database reset), sent with the next batch.
    func note(kind: String, detail: String, at milliseconds: Int64) throws(SQLiteError) {
        try addNote.bind(kind, at: 1)
        try addNote.bind(detail, at: 2)
        try addNote.bind(milliseconds, at: 3)
        try addNote.run()
    }
}
