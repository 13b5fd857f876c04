/// A SQLite file the collector cannot use as asked, with what to do about it: one that is not
/// there, not a collector's database, of another collector release's schema, or read-only
/// where the collector must write.
package struct SQLiteStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        case noSuchFile
        case unreadable
        case notACollectorDatabase
        case olderSchema
        case newerSchema
        case notWritable
    }

    package let kind: Kind
    package let path: String
    package let description: String

    init(_ kind: Kind, path: String, _ description: String) {
        self.kind = kind
        self.path = path
        self.description = description
    }
}
