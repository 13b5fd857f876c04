import Foundation
import Testing
@_spi(NFLogShared) import NFLogSupport

@Suite("Quantile sketch: 1% relative error, exact merges")
struct QuantileSketchTests {
    enum Distribution: String, CaseIterable, Sendable {
        case uniform, logNormal, bimodal, negativeAndPositive

        func sample(_ random: inout SeededRandom) -> Double {
            func unit() -> Double { Double(random.next() >> 11) / Double(1 << 53) }
            func normal() -> Double { sqrt(-2 * log(max(unit(), 1e-300))) * cos(2 * .pi * unit()) }
            switch self {
            case .uniform: return 1 + unit() * 999                       // 1…1000 ms
            case .logNormal: return exp(3 + 1.2 * normal())               // latencies: a long tail
            case .bimodal: return unit() < 0.7 ? 16.7 + normal() : 120 + 15 * normal()  // frames: smooth, and janky
            case .negativeAndPositive: return normal() * 50               // both signs, zeros' neighbourhood
            }
        }
    }

    static let quantiles = [0.0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0]

    @Test("100,000 values over 10 devices: every merged quantile is within 1% of the exact value of its rank; another order gives the same sketch",
          arguments: Distribution.allCases)
    func mergedAccuracy(distribution: Distribution) throws {
        var random = SeededRandom(seed: 42)
        let values = (0..<100_000).map { _ in distribution.sample(&random) }
        var devices = [QuantileSketch](repeating: QuantileSketch(), count: 10)
        for (index, value) in values.enumerated() { devices[index % 10].add(value) }
        var merged = QuantileSketch()
        for device in devices { merged.merge(device) }
        #expect(merged.count == 100_000)

        let sorted = values.sorted()
        var worst = 0.0
        for q in Self.quantiles {
            let exact = sorted[Int((q * Double(sorted.count - 1)).rounded(.down))]
            let estimate = try #require(merged.quantile(q))
            let error = exact == 0 ? abs(estimate) : abs(estimate - exact) / abs(exact)
            worst = max(worst, error)
            #expect(error <= QuantileSketch.relativeAccuracy + 1e-12, "\(distribution) p\(q * 100): exact \(exact), sketch \(estimate)")
        }
        print("sketch \(distribution): worst relative error \(worst) over \(Self.quantiles.count) quantiles")

        // The same values in another order, merged in another grouping: the same sketch.
        var shuffled = values
        shuffled.shuffle(using: &random)
        var halves = [QuantileSketch(), QuantileSketch()]
        for (index, value) in shuffled.enumerated() { halves[index % 2].add(value) }
        var other = halves[1]
        other.merge(halves[0])
        #expect(other == merged)
    }

    @Test("Its size is bounded: values over 40 orders of magnitude keep at most 2,048 buckets a sign; quantiles above the collapsed range stay within 1%, those in it are reported high")
    func bounded() throws {
        var sketch = QuantileSketch()
        var values: [Double] = []
        var value = 1e-8
        while value < 1e32 {
            sketch.add(value)
            values.append(value)
            value *= 1.01
        }
        #expect(sketch.positive.counts.count <= QuantileSketch.maxBuckets)
        let sorted = values.sorted()
        // 2,048 buckets at 1% cover 17.8 orders of magnitude: the top of this range, from ~1e14.
        for q in [0.75, 0.9, 0.99, 1.0] {
            let exact = sorted[Int((q * Double(sorted.count - 1)).rounded(.down))]
            let estimate = try #require(sketch.quantile(q))
            #expect(abs(estimate - exact) / exact <= QuantileSketch.relativeAccuracy + 1e-12, "p\(q * 100): exact \(exact), sketch \(estimate)")
        }
        let median = sorted[Int((0.5 * Double(sorted.count - 1)).rounded(.down))]
        #expect(try #require(sketch.quantile(0.5)) >= median, "collapsed: reported at the lowest bucket kept")
        let encoded = try JSONEncoder().encode(sketch)
        #expect(encoded.count < 40 * 1024, "\(encoded.count) bytes as JSON")
    }

    @Test("An empty sketch has no quantiles; non-finite values are ignored; it round-trips through JSON")
    func edges() throws {
        var sketch = QuantileSketch()
        #expect(sketch.quantile(0.5) == nil)
        sketch.add(.nan)
        sketch.add(.infinity)
        #expect(sketch.count == 0)
        for value in [0.0, 1e-12, -3, 5, 5, 5] { sketch.add(value) }
        #expect(sketch.count == 6 && sketch.zeroCount == 2)
        #expect(try #require(sketch.quantile(0)) < -2.9)
        let decoded = try JSONDecoder().decode(QuantileSketch.self, from: JSONEncoder().encode(sketch))
        #expect(decoded == sketch)
    }

    @Test("Decoding refuses what a hostile client could send: another accuracy, too many buckets, wild offsets, overflowing counts",
          arguments: [
              #"{"relative_accuracy":0.02,"zero_count":0,"positive":{"offset":0,"counts":[]},"negative":{"offset":0,"counts":[]}}"#,
              #"{"relative_accuracy":0.01,"zero_count":0,"positive":{"offset":9999999,"counts":[1]},"negative":{"offset":0,"counts":[]}}"#,
              #"{"relative_accuracy":0.01,"zero_count":0,"positive":{"offset":0,"counts":[18446744073709551615,1]},"negative":{"offset":0,"counts":[]}}"#,
              #"{"relative_accuracy":0.01,"zero_count":-1,"positive":{"offset":0,"counts":[]},"negative":{"offset":0,"counts":[]}}"#,
              // Found by the collector's review: each once trapped (abs of Int.min; the total overflowing).
              #"{"relative_accuracy":0.01,"zero_count":0,"positive":{"offset":-9223372036854775808,"counts":[1]},"negative":{"offset":0,"counts":[]}}"#,
              #"{"relative_accuracy":0.01,"zero_count":18446744073709551615,"positive":{"offset":0,"counts":[1]},"negative":{"offset":0,"counts":[]}}"#,
              #"{"relative_accuracy":0.01,"zero_count":1,"positive":{"offset":0,"counts":[9223372036854775807]},"negative":{"offset":0,"counts":[9223372036854775807]}}"#,
              #"{"relative_accuracy":0.01,"zero_count":0,"positive":{"offset":0,"counts":[\#(Array(repeating: "1", count: 2_049).joined(separator: ","))]},"negative":{"offset":0,"counts":[]}}"#,
          ])
    func hostileDecoding(json: String) {
        #expect(throws: (any Error).self) { try JSONDecoder().decode(QuantileSketch.self, from: Data(json.utf8)) }
    }

    @Test("The encoding is the documented one, and a sketch written by hand (as another implementation would) decodes and answers")
    func documentedEncoding() throws {
        var sketch = QuantileSketch()
        sketch.add(1)
        let text = String(decoding: try JSONEncoder().encode(sketch), as: UTF8.self)
        for key in ["\"relative_accuracy\":0.01", "\"zero_count\":0", "\"positive\":{", "\"offset\":0", "\"counts\":[1]"] {
            #expect(text.contains(key), "\(text)")
        }
        // 100 values in the bucket holding 100 (index ceil(log(100)/log(1.0202…)) = 231), padded with zeros.
        let manual = #"{"relative_accuracy":0.01,"zero_count":0,"positive":{"offset":229,"counts":[0,0,100,0]},"negative":{"offset":0,"counts":[]}}"#
        let decoded = try JSONDecoder().decode(QuantileSketch.self, from: Data(manual.utf8))
        let median = try #require(decoded.quantile(0.5))
        #expect(abs(median - 100) / 100 <= QuantileSketch.relativeAccuracy)
        #expect(decoded.positive.offset == 231 && decoded.positive.counts == [100])
    }
}

@Suite("Measure summaries: what an aggregate keeps of a numeric parameter")
struct MeasureSummaryTests {
    @Test("Count, sum, min, max and the sketch, merged across devices, equal the summary of all the values; quantiles stay within min and max")
    func merged() throws {
        var random = SeededRandom(seed: 7)
        let values = (0..<20_000).map { _ in Double(random.next() % 100_000) / 100 + 0.5 }
        var whole = MeasureSummary()
        var parts = [MeasureSummary](repeating: MeasureSummary(), count: 4)
        for (index, value) in values.enumerated() {
            whole.add(value)
            parts[index % 4].add(value)
        }
        var merged = MeasureSummary()
        for part in parts.reversed() { merged.merge(part) }
        #expect(merged.count == whole.count && merged.min == values.min() && merged.max == values.max())
        #expect(abs(merged.sum - values.reduce(0, +)) < 1e-6 * merged.sum)
        #expect(merged.sketch == whole.sketch)
        let p100 = try #require(merged.quantile(1))
        #expect(p100 <= merged.max && p100 >= merged.max * 0.99)
        #expect(try #require(merged.quantile(0)) >= merged.min)
        let mean = try #require(merged.mean)
        #expect(abs(mean - values.reduce(0, +) / Double(values.count)) < 1e-9 * mean)
    }

    @Test("It round-trips through JSON; a document whose count disagrees with its sketch, or with min above max, is refused")
    func encoding() throws {
        var summary = MeasureSummary()
        for value in [16.7, 16.9, 33.4] { summary.add(value) }
        let decoded = try JSONDecoder().decode(MeasureSummary.self, from: JSONEncoder().encode(summary))
        #expect(decoded == summary)
        let empty = try JSONDecoder().decode(MeasureSummary.self, from: JSONEncoder().encode(MeasureSummary()))
        #expect(empty == MeasureSummary() && empty.mean == nil)
        let sketch = String(decoding: try JSONEncoder().encode(summary.sketch), as: UTF8.self)
        for bad in [#"{"count":4,"sum":67,"min":16.7,"max":33.4,"sketch":\#(sketch)}"#,
                    #"{"count":3,"sum":67,"min":40,"max":33.4,"sketch":\#(sketch)}"#] {
            #expect(throws: (any Error).self) { try JSONDecoder().decode(MeasureSummary.self, from: Data(bad.utf8)) }
        }
    }
}
