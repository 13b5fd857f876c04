import Foundation
@_spi(NFLogShared) import NFLogSupport

/// `decode`: what the collector's decoder costs an event, without a server (valgrind cannot run
/// the collector's NIO threads). A batch of 1,000 typical point events, made once, is parsed and
/// checked `batches` times; the benchmark counts it less the same run with none, ÷ 1,000 per batch.
enum Decode {
    static let eventsPerBatch = 1_000

    static func run(batches: Int) throws {
        let session = "0193a7c2-0000-7000-8000-000000000001"
        var events: [String] = []
        for index in 0..<eventsPerBatch {
            // UUIDv7-like ids, time first, as the SDK makes them.
            let id = String(format: "0193a7c2-%04lx-7000-8000-%012lx", index % 0x10000, index)
            events.append(#"{"uuid":"\#(id)","session":"\#(session)","name":"ui.tap","kind":"point","type":"event","timestamp":\#(1_750_000_000_000 + index),"parameters":{"screen":"home","button":"buy","index":\#(index)}}"#)
        }
        let body = Array("""
            {"version":1,"batch_id":"0193a7c2-9d41-7b3e-8f00-6c2a5d1e4b70","sent_at":1750000000500,"sdk":{"name":"NFLogger","version":"0.1.0"},\
            "context":{"app_id":"com.example.bench","app_version":"1.0","os_name":"iOS","os_version":"18.1","locale":"en",\
            "sessions":[{"id":"\(session)","started_at":1749999990000}]},"events":[\(events.joined(separator: ","))]}
            """.utf8)
        var decoded = 0
        for _ in 0..<batches { decoded += try BatchDecoder().decode(body).events.count }
        guard decoded == batches * eventsPerBatch else { throw DecodeFailure(decoded: decoded) }
    }

    struct DecodeFailure: Error {
        let decoded: Int
    }
}
