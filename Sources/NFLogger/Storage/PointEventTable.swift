import Foundation
@_spi(NFLogShared) import NFLogSupport
/// `point_events`: one row per point event.
final class PointEventTable: EventTable {
    let kind = RecordKind.point
    let tableName = "point_events"
    let uploadColumns = "e.uuid, e.session_id, e.name, e.type, e.parameters, e.timestamp_ms, NULL, NULL, NULL, 0, e.transaction_id, e.parent_span, NULL, e.web_origin"
    let timeColumn = "timestamp_ms"
    let readyCondition = ""
    private let connection: SQLiteConnection
    /// The statements for rows that keep the last four columns' defaults, and for any row.
    private let plain: Statements
    private let full: Statements
    private let cipher: ParameterCipher?
    /// The rows the largest multi-row insert takes; the writer hands rows over in runs this long.
    static let rowsPerInsert = 64

    /// One column list's inserts, ``rowsPerInsert`` rows to a statement, then fewer.
    private struct Statements {
        let columnCount: Int32
        let inserts: SQLiteMultiRowInsert

        init(_ connection: SQLiteConnection, columns: [String]) throws(SQLiteError) {
            columnCount = Int32(columns.count)
            let list = "(" + columns.joined(separator: ", ") + ")"
            let placeholders = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            inserts = try SQLiteMultiRowInsert(connection, rowsPerStatement: PointEventTable.rowsPerInsert) { count in
                "INSERT INTO point_events \(list) VALUES \(Array(repeating: placeholders, count: count).joined(separator: ", "))"
            }
        }
    }

    /// Every row binds these; ``full`` binds ``extraColumns`` after them.
    private static let plainColumns = ["uuid", "session_id", "name", "type", "parameters", "timestamp_ms", "priority"]
    private static let extraColumns = ["held", "transaction_id", "parent_span", "web_origin"]

    init(connection: SQLiteConnection, cipher: ParameterCipher?) throws(SQLiteError) {
        self.connection = connection
        self.cipher = cipher
        plain = try Statements(connection, columns: Self.plainColumns)
        full = try Statements(connection, columns: Self.plainColumns + Self.extraColumns)
    }

    /// A row to insert: the event, its session's row id, its priority.
    struct Row {
        let event: EventRecord
        let sessionRowID: Int64
        let priority: Int
    }

    /// Whether the row's last four columns keep their defaults (not held, no transaction, parent
    /// span or web origin), as most rows do: then it binds seven parameters, not eleven.
    private static func isPlain(_ row: Row) -> Bool {
        !row.event.held && row.event.draft.link == nil
    }

    func insert(_ event: EventRecord, sessionRowID: Int64, priority: Int) throws(SQLiteError) {
        try insert([Row(event: event, sessionRowID: sessionRowID, priority: priority)][...])
    }

    /// Inserts `rows` in order (their row ids ascend in that order): each run of plain or other
    /// rows through its statements, as many to a statement as the largest that fits takes, the
    /// rest one each.
    func insert(_ rows: ArraySlice<Row>) throws(SQLiteError) {
        var rest = rows
        while let first = rest.first {
            let isPlain = Self.isPlain(first)
            let end = rest.firstIndex { Self.isPlain($0) != isPlain } ?? rest.endIndex
            try insert(run: rest[..<end], isPlain ? plain : full)
            rest = rest[end...]
        }
    }

    private func insert(run rows: ArraySlice<Row>, _ statements: Statements) throws(SQLiteError) {
        try statements.inserts.forEachRun(count: rows.count) { (run, statement) throws(SQLiteError) in
            let first = rows.startIndex + run.lowerBound
            try bindAndRun(rows[first..<(first + run.count)], statement, columnCount: statements.columnCount)
        }
    }

    /// Where one row's texts and blobs lie in ``arena``.
    private struct Slices {
        var id = 0
        var name = 0, nameCount = 0
        var type = 0, typeCount = 0
        var parameters = 0, parametersCount: Int?
    }
    /// The bytes of a statement's texts and blobs, copied in and lent to SQLite while it runs;
    /// kept (with its capacity) from one statement to the next. Confined to the writer's queue,
    /// like the table.
    private var arena: [UInt8] = []
    private var slices: [Slices] = []

    /// Binds `rows` (each `columnCount` parameters after the last) and runs the statement. The
    /// texts and blobs are copied into one buffer, lent to SQLite, not copied again by it.
    private func bindAndRun(_ rows: ArraySlice<Row>, _ statement: SQLiteStatement, columnCount: Int32) throws(SQLiteError) {
        // Worked on as locals and put back after: a class's stored arrays are checked for
        // exclusive access on every use, which cost more than the copying.
        var arena: [UInt8] = []
        var slices: [Slices] = []
        swap(&arena, &self.arena)
        swap(&slices, &self.slices)
        defer {
            arena.removeAll(keepingCapacity: true)
            slices.removeAll(keepingCapacity: true)
            swap(&arena, &self.arena)
            swap(&slices, &self.slices)
        }
        for row in rows.indices {
            var slice = Slices()
            slice.id = arena.appendBytes(of: rows[row].event.id).offset
            (slice.name, slice.nameCount) = arena.appendUTF8(rows[row].event.draft.name)
            (slice.type, slice.typeCount) = arena.appendUTF8(rows[row].event.draft.type)
            if let json = rows[row].event.draft.parameters {
                slice.parameters = arena.count
                if let cipher {
                    arena.append(contentsOf: try cipher.sealForStorage(json, id: rows[row].event.id, slot: .parameters))
                } else {
                    arena.append(contentsOf: json)
                }
                slice.parametersCount = arena.count - slice.parameters
            }
            slices.append(slice)
        }
        let asText = cipher == nil  // sealed parameters are a BLOB; plaintext never reaches the file then
        try statement.lending(arena: arena) { (lent) throws(SQLiteError) in
            var offset: Int32 = 0
            for (row, slice) in zip(rows.indices, slices) {
                try lent.bind(offset: slice.id, count: 16, asText: false, at: offset + 1)
                try statement.bind(rows[row].sessionRowID, at: offset + 2)
                try lent.bind(offset: slice.name, count: slice.nameCount, asText: true, at: offset + 3)
                try lent.bind(offset: slice.type, count: slice.typeCount, asText: true, at: offset + 4)
                try lent.bind(offset: slice.parameters, count: slice.parametersCount, asText: asText, at: offset + 5)
                try statement.bind(rows[row].event.draft.wallMilliseconds, at: offset + 6)
                try statement.bind(Int64(rows[row].priority), at: offset + 7)
                if columnCount > 7 {
                    try statement.bind(Int64(rows[row].event.held ? 1 : 0), at: offset + 8)
                    try statement.bindTransaction(of: rows[row].event, at: offset + 9)
                }
                offset += columnCount
            }
            try statement.run()
        }
    }

    func count() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM point_events"))
    }
}
