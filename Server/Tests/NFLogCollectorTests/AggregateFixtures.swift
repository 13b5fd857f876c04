import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Aggregates written from docs/PROTOCOL.md ("Aggregates"), as JSON objects a test can change
/// field by field before writing them into a batch.
enum AggregateFixtures {
    /// A measure summary of `values`, encoded as NFLogSupport writes it (what the SDK sends).
    static func summary(_ values: [Double]) -> [String: Any] {
        var summary = MeasureSummary()
        for value in values { summary.add(value) }
        return object(summary)
    }

    static func object(_ summary: MeasureSummary) -> [String: Any] {
        let data = (try? JSONEncoder().encode(summary)) ?? Data("{}".utf8)
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    /// `perf.frame` over one 60 s window, 3 events, `ms` measured, screen=home.
    static func aggregate(_ uuid: String = UUID().uuidString.lowercased(), name: String = "perf.frame",
                          start: Int64 = 1_750_000_020_000, window: Int64 = 60, values: [Double] = [8.1, 16.7, 33.4],
                          dimensions: [String: String]? = ["screen": "home"]) -> [String: Any] {
        var aggregate: [String: Any] = [
            "uuid": uuid, "session": BatchFixtures.session, "name": name, "type": "measurement",
            "start": start, "end": start + window * 1_000, "window_s": window, "count": values.count,
            "measures": ["ms": summary(values)],
        ]
        if let dimensions { aggregate["dimensions"] = dimensions }
        return aggregate
    }

    static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// A batch of `events` and `aggregates` (JSON texts), from BatchFixtures' context.
    static func batch(id: String = UUID().uuidString.lowercased(), events: [String] = [], aggregates: [String]) -> String {
        String(BatchFixtures.batch(id: id, events: events).dropLast()) + #","aggregates":[\#(aggregates.joined(separator: ","))]}"#
    }

    /// A batch of one aggregate, changed by `change` first.
    static func batch(_ change: (inout [String: Any]) -> Void) -> String {
        var aggregate = aggregate()
        change(&aggregate)
        return batch(aggregates: [json(aggregate)])
    }

    /// `aggregate["measures"]["ms"]`, changed by `change`.
    static func changeMeasure(_ aggregate: inout [String: Any], _ change: (inout [String: Any]) -> Void) {
        var measures = aggregate["measures"] as? [String: Any] ?? [:]
        var measure = measures["ms"] as? [String: Any] ?? [:]
        change(&measure)
        measures["ms"] = measure
        aggregate["measures"] = measures
    }

    /// `aggregate["measures"]["ms"]["sketch"]`, changed by `change`.
    static func changeSketch(_ aggregate: inout [String: Any], _ change: (inout [String: Any]) -> Void) {
        changeMeasure(&aggregate) { measure in
            var sketch = measure["sketch"] as? [String: Any] ?? [:]
            change(&sketch)
            measure["sketch"] = sketch
        }
    }
}
