import Foundation

extension RecordedContext {
    /// A batch's `context`, with its `sdk`; or an export line's `context`, which holds both.
    @_spi(NFLogShared) public init(wire: WireObject, sdkName: String, sdkVersion: String) throws(WireFormatError) {
        self.sdkName = sdkName
        self.sdkVersion = sdkVersion
        appID = try wire.string("app_id")
        appVersion = try wire.string("app_version")
        osName = try wire.string("os_name")
        osVersion = try wire.string("os_version")
        locale = try wire.string("locale")
    }
}

extension RecordedBatch {
    private static func events(wire: WireObject) throws(WireFormatError) -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        for event in try wire.objects("events") { events.append(try RecordedEvent(wire: event)) }
        return events
    }

    /// A batch document, not answered yet: ``response`` is ``RecordingTransport/Response/accept``
    /// until the transport sets it.
    init(wire: WireObject, appKey: String?) throws(WireFormatError) {
        let version = try wire.integer("version")
        guard version == 1 else { throw WireFormatError(path: "version", "must be 1, not \(version)") }
        id = try wire.uuid("batch_id")
        sentAt = try wire.date("sent_at")
        self.appKey = appKey
        let sdk = try wire.object("sdk")
        let context = try wire.object("context")
        self.context = try RecordedContext(wire: context, sdkName: sdk.string("name"), sdkVersion: sdk.string("version"))
        var sessions: [RecordedSession] = []
        for session in try context.objects("sessions") {
            sessions.append(RecordedSession(id: try session.uuid("id"), startedAt: try session.date("started_at"),
                                            endedAt: try session.optionalDate("ended_at")))
        }
        self.sessions = sessions
        events = try Self.events(wire: wire)
        var aggregates: [RecordedAggregate] = []
        if wire.contains("aggregates") {
            for aggregate in try wire.objects("aggregates") { aggregates.append(try RecordedAggregate(wire: aggregate)) }
        }
        self.aggregates = aggregates
        let diagnostics = try wire.optionalObject("diagnostics")
        var pruned: [String: Int64] = [:]
        if let counts = try diagnostics?.optionalObject("pruned") {
            for name in counts.keys { pruned[name] = try counts.integer(name) }
        }
        prunedEvents = pruned
        var resets: [DatabaseReset] = []
        if let diagnostics, diagnostics.contains("database_resets") {
            for reset in try diagnostics.objects("database_resets") {
                resets.append(DatabaseReset(at: try reset.date("at"), reason: try reset.string("reason")))
            }
        }
        databaseResets = resets
        response = .accept
    }
}
