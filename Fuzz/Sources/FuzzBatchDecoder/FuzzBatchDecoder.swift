@_spi(NFLogShared) import NFLogSupport

/// The collector's view of a request body: `BatchDecoder.decode` with the limits it serves with,
/// then the properties a decoded batch must have, or the error's text (the collector answers with
/// it). Then the JSON parser alone with tight limits, so that the depth, string-length and
/// value-count refusals are reached by small inputs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBatchDecoder(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let body = Array(UnsafeRawBufferPointer(start: start, count: count))

    let decoder = BatchDecoder()
    do {
        check(try decoder.decode(body), decoder: decoder)
    } catch {
        _ = error.description
    }

    var tight = JSONParser.Limits()
    tight.maxDepth = 3
    tight.maxStringBytes = 8
    tight.maxValues = 24
    do {
        let document = try JSONParser.parse(body, limits: tight)
        // What passes tight limits passes the default ones, as the same document.
        guard (try? JSONParser.parse(body)) == document else {
            fatalError("a document accepted with tight limits was refused or parsed differently with the default limits")
        }
    } catch {
        _ = error.description
    }
    return 0
}

private func check(_ batch: Batch, decoder: BatchDecoder) {
    guard batch.version == 1 else { fatalError("decoded a batch of version \(batch.version)") }
    guard batch.events.count <= decoder.maxEvents, !batch.events.isEmpty || batch.diagnostics != nil else {
        fatalError("decoded a batch with \(batch.events.count) events and no diagnostics")
    }
    let sessions = Set(batch.context.sessions.map(\.id))
    guard sessions.count == batch.context.sessions.count else { fatalError("a session is listed twice") }
    for event in batch.events {
        guard sessions.contains(event.session) else { fatalError("an event's session is not listed") }
        guard event.timestamp >= 0 else { fatalError("a negative timestamp") }
        // Parameters are kept verbatim; they must be a JSON object on their own.
        for raw in [event.parameters, event.endParameters].compactMap({ $0 }) {
            guard case .object? = try? JSONParser.parse(Array(raw.utf8)) else {
                fatalError("verbatim parameters are not a JSON object: \(raw)")
            }
        }
        switch event.kind {
        case .point:
            guard event.end == nil, event.durationMilliseconds == nil, event.endParameters == nil, !event.abandoned else {
                fatalError("a point event with span fields")
            }
        case .span:
            guard event.end != nil, let duration = event.durationMilliseconds, duration >= 0 else {
                fatalError("a span without an end or with a negative duration")
            }
        }
    }
}
