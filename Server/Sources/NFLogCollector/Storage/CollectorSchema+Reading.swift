import Foundation
@_spi(NFLogShared) import NFLogSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a collector database to read it only (`nflog-collector report` and `export`): the
/// file is never created, migrated or written, and one that is not this release's collector
/// schema is refused with what it is instead.
extension CollectorSchema {
    /// The tables every version of the collector's schema has (migration 1).
    static let collectorTables: Set<String> = ["contexts", "sessions", "events", "batches", "totals", "name_counts"]

    static var latestVersion: Int32 { migrations.last?.version ?? 0 }

    /// A read-only connection to the collector database at `path`, checked to be of this
    /// release's schema.
    ///
    /// When no write-ahead log is beside the file, nothing is writing it, and the file alone is
    /// looked at first without locks (`immutable`): a file that is refused then gets no `-wal`
    /// and `-shm` files beside it, which a read-only connection to a WAL file makes.
    static func openForReading(_ path: String) throws(SQLiteStoreError) -> SQLiteConnection {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SQLiteStoreError(.noSuchFile, path: path, "no such file \(path)")
        }
        guard !isDirectory.boolValue else {
            throw SQLiteStoreError(.notACollectorDatabase, path: path, "\(path) is a directory, not a collector database")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw SQLiteStoreError(.unreadable, path: path, "cannot read \(path) (\(String(cString: strerror(errno))))")
        }
        close(fd)
        if !FileManager.default.fileExists(atPath: path + "-wal") {
            try check(connect(path, mode: .immutable), path: path)
        }
        let connection = try connect(path, mode: .readOnly)
        try check(connection, path: path)
        return connection
    }

    private static func connect(_ path: String, mode: SQLiteConnection.OpenMode) throws(SQLiteStoreError) -> SQLiteConnection {
        do throws(SQLiteError) { return try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000, mode: mode) } catch {
            throw SQLiteStoreError(.unreadable, path: path, "cannot read \(path) (\(error.message))")
        }
    }

    /// Refuses what is not a collector database of this release's schema, saying what it is.
    static func check(_ connection: SQLiteConnection, path: String) throws(SQLiteStoreError) {
        let tables: Set<String>
        let version: Int64
        do throws(SQLiteError) {
            tables = Set(try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").collect { $0.text(at: 0) ?? "" })
            version = try connection.scalarInt("PRAGMA user_version")
        } catch where error.primaryCode == 26 /* SQLITE_NOTADB */ {
            throw SQLiteStoreError(.notACollectorDatabase, path: path, "\(path) is not a collector database (it is not a SQLite file)")
        } catch {
            throw SQLiteStoreError(.unreadable, path: path, "cannot read \(path) (\(error.message))")
        }
        guard collectorTables.isSubset(of: tables) else {
            let why: String
            if tables.isEmpty {
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
                why = size == 0 ? "the file is empty" : "it holds no tables"
            } else if tables.contains("point_events") && tables.contains("span_events") {
                why = "it is an NFLogger SDK database, the one an app keeps on the device; this reads what a collector stored"
            } else {
                why = "it has tables " + tables.sorted().prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
                    + " but not the collector's"
            }
            throw SQLiteStoreError(.notACollectorDatabase, path: path, "\(path) is not a collector database (\(why))")
        }
        if version < Int64(latestVersion) {
            throw SQLiteStoreError(.olderSchema, path: path, """
                \(path) was written by an older collector (schema version \(version); this one reads version \(latestVersion)): \
                run nflog-collector serve --db \(path) once to migrate it, then read it
                """)
        }
        if version > Int64(latestVersion) {
            throw SQLiteStoreError(.newerSchema, path: path, """
                \(path) was written by a newer collector (schema version \(version); this one reads up to \(latestVersion)): \
                read it with that release
                """)
        }
    }
}
