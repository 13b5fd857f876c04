import Foundation
@testable import NFLogCollector
@_spi(NFLogShared) import NFLogSupport

/// Events and aggregates at chosen times, from two app versions, for the report over time.
///
/// Around ``hour`` (2025-06-15T16:00Z, an hour's start, in the day that starts at ``day``):
/// - version 2.1.0: a point at `hour - 1` (the hour before); points at `hour` and `hour + 3_599_999`
///   (the hour's first and last millisecond); a web point; round trips of 40, 10, 30 and 20 ms and
///   one abandoned (1,000 ms); in the next hour one round trip of 7.5 ms;
/// - version 3.0.0: a point and a 99 ms round trip in the hour.
/// - aggregates: `perf.frame` (`ms`) twice in the hour (2.1.0: 8.1, 16.7, 33.4; then 9.9, 12.5) and
///   once in the next (3.0.0: 4.4).
enum SeriesFixtures {
    static let hour: Int64 = 1_750_003_200_000
    static let day: Int64 = 1_749_945_600_000
    static let session = "0193a7c2-0000-7000-8000-000000000001"

    static func point(at time: Int64, web: Bool = false) -> String {
        let source = web ? #","source":"web","origin":"https://shop.example""# : ""
        return #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"ui.tap","kind":"point","type":"event","timestamp":\#(time)\#(source)}"#
    }

    static func roundTrip(at time: Int64, ms: Double, abandoned: Bool = false) -> String {
        #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"net.request","kind":"span","type":"network","timestamp":\#(time),"start":\#(time),"end":\#(time + Int64(ms)),"duration_ms":\#(ms),"abandoned":\#(abandoned)}"#
    }

    /// An aggregate of `name` starting at `start`, one measure summary per entry of `measures`.
    static func aggregate(_ name: String, start: Int64, count: Int, measures: [String: [Double]]) -> String {
        var aggregate = AggregateFixtures.aggregate(name: name, start: start, values: [1], dimensions: nil)
        aggregate["count"] = count
        aggregate["measures"] = measures.mapValues(AggregateFixtures.summary)
        return AggregateFixtures.json(aggregate)
    }

    static func batch(version: String, events: [String], aggregates: [String] = []) throws -> Batch {
        try BatchDecoder().decode(Array("""
            {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":1750000005000,"sdk":{"name":"NFLogger","version":"0.1.0"},
             "context":{"app_id":"com.example.shop","app_version":"\(version)","os_name":"iOS","os_version":"18","locale":"en_GB",
                        "sessions":[{"id":"\(session)","started_at":1749999990000}]},
             "events":[\(events.joined(separator: ","))],"aggregates":[\(aggregates.joined(separator: ","))]}
            """.utf8))
    }

    static func batches() throws -> [Batch] {
        let next = hour + 3_600_000
        return [
            try batch(version: "2.1.0", events: [
                point(at: hour - 1), point(at: hour), point(at: hour + 3_599_999), point(at: hour + 10, web: true),
                roundTrip(at: hour + 5, ms: 40), roundTrip(at: hour + 5, ms: 10), roundTrip(at: hour + 5, ms: 30),
                roundTrip(at: hour + 5, ms: 20), roundTrip(at: hour + 6, ms: 1_000, abandoned: true), roundTrip(at: next, ms: 7.5),
            ], aggregates: [
                aggregate("perf.frame", start: hour + 20_000, count: 3, measures: ["ms": [8.1, 16.7, 33.4]]),
                aggregate("perf.frame", start: hour + 80_000, count: 2, measures: ["ms": [9.9, 12.5]]),
            ]),
            try batch(version: "3.0.0", events: [point(at: hour + 100), roundTrip(at: hour + 200, ms: 99)],
                      aggregates: [aggregate("perf.frame", start: next + 20_000, count: 1, measures: ["ms": [4.4]])]),
        ]
    }

    /// 22 aggregated names (`name.00` with the most events … `name.21` the fewest) and, on
    /// `name.00`, 17 measures in one aggregate (`m00` … `m16`), then a later one with a new measure
    /// (`late`) and `m00` again.
    static func manyNames() throws -> Batch {
        var aggregates: [String] = []
        for i in 0..<22 {
            aggregates.append(aggregate(String(format: "name.%02d", i), start: hour, count: 100 - i, measures: ["v": [Double(i)]]))
        }
        let many = Dictionary(uniqueKeysWithValues: (0..<17).map { (String(format: "m%02d", $0), [Double($0)]) })
        aggregates.append(aggregate("name.00", start: hour + 60_000, count: 1, measures: many))
        aggregates.append(aggregate("name.00", start: hour + 3_600_000, count: 1, measures: ["late": [1], "m00": [2]]))
        return try batch(version: "2.1.0", events: [point(at: hour)], aggregates: aggregates)
    }

    /// Sorted keys, as the collector's routes encode.
    static func json(_ series: ReportSeries) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(series), as: UTF8.self)
    }
}
