public import Foundation
@_spi(NFLogShared) import NFLogSupport

/// An aggregate the collector stored, as it exports it (`docs/PROTOCOL.md`, "Export format"):
/// many events of one name folded by the SDK into one record per window and dimension values.
public struct ExportedAggregate: Sendable, Equatable {
    /// The app whose key uploaded it.
    public let app: String
    public let uuid: UUID
    /// The batch it arrived in (the first, if it was sent more than once).
    public let batchID: UUID
    /// The session in which it was opened.
    public let session: UUID
    public let name: String
    public let type: String
    /// The time range it covers, in Unix milliseconds.
    public let start: Int64
    public let end: Int64
    public let windowSeconds: Int
    /// The events folded in.
    public let count: Int
    /// The values of the rule's dimension parameters.
    public let dimensions: [String: String]
    /// It folds the events of every series past the rule's series limit.
    public let overflow: Bool
    /// By parameter name (`duration_ms` for a span's duration).
    public let measures: [String: ExportedMeasure]
    /// When the collector stored it (its clock, to the millisecond).
    public let receivedAt: Date
}

extension ExportedAggregate {
    /// The fields of one line of the export.
    private struct Line: Decodable {
        let app: String
        let uuid: UUID
        let batchID: UUID
        let session: UUID
        let name: String
        let type: String
        let start: Int64
        let end: Int64
        let windowSeconds: Int
        let count: Int
        let dimensions: [String: String]
        let overflow: Bool?
        let measures: [String: MeasureSummary]
        let receivedAt: Int64

        enum CodingKeys: String, CodingKey {
            case app, uuid, session, name, type, start, end, count, dimensions, overflow, measures
            case batchID = "batch_id", windowSeconds = "window_s", receivedAt = "received_at"
        }
    }

    /// One line of the export.
    init(line: [UInt8]) throws {
        let wire = try JSONDecoder().decode(Line.self, from: Data(line))
        self.init(app: wire.app, uuid: wire.uuid, batchID: wire.batchID, session: wire.session, name: wire.name, type: wire.type,
                  start: wire.start, end: wire.end, windowSeconds: wire.windowSeconds, count: wire.count, dimensions: wire.dimensions,
                  overflow: wire.overflow ?? false, measures: wire.measures.mapValues(ExportedMeasure.init),
                  receivedAt: Date(timeIntervalSince1970: Double(wire.receivedAt) / 1_000))
    }
}
