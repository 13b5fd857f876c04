import Foundation
@_spi(NFLogShared) import NFLogSupport

/// What the rollups need of one stored event: from a batch at ingest (``init(_:)``), or from a
/// stored row when the rollups are built for events stored before them (the backfill).
struct RollupEvent: Sendable {
    let timestamp: Int64
    let name: String
    let kind: String
    let type: String
    let web: Bool
    let origin: String?
    let abandoned: Bool
    /// Use cases only: abandoned, or ended by the app as not completed (``Batch/Event/givenUp``).
    let givenUp: Bool?
    let durationMilliseconds: Double?

    init(timestamp: Int64, name: String, kind: String, type: String, web: Bool, origin: String?, abandoned: Bool,
         givenUp: Bool?, durationMilliseconds: Double?) {
        self.timestamp = timestamp
        self.name = name
        self.kind = kind
        self.type = type
        self.web = web
        self.origin = origin
        self.abandoned = abandoned
        self.givenUp = givenUp
        self.durationMilliseconds = durationMilliseconds
    }

    /// `givenUp`: the event's ``Batch/Event/givenUp``, which its store computed already.
    init(_ event: Batch.Event, givenUp: Bool?) {
        self.init(timestamp: event.timestamp, name: event.name, kind: event.kind.rawValue, type: event.type,
                  web: event.source == .web, origin: event.origin, abandoned: event.abandoned, givenUp: givenUp,
                  durationMilliseconds: event.durationMilliseconds)
    }

    /// Whether the event's duration goes into its row's sketch: a completed use case's (its time,
    /// in the report) or a network round trip's (a `network` span not abandoned). Other spans'
    /// durations are not reported, and keep no bucket rows.
    var isMeasured: Bool {
        guard kind == Batch.Kind.span.rawValue, durationMilliseconds != nil else { return false }
        if type == "usecase" { return givenUp == false }
        return type == "network" && !abandoned
    }
}
