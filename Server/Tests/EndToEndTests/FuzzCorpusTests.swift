import FaultProxy
import Foundation
import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
@testable import NFLogger
import Testing

/// CI's short fuzz run, in the ordinary debug build: the fuzz targets' corpora (Fuzz/Corpus, the
/// crash the fuzzer found included) and seeded mutations of them through the batch decoder, the
/// policy parser and gzip inflation. Coverage-guided runs of a million inputs and more are
/// `scripts/fuzz` (libFuzzer with AddressSanitizer); this keeps every CI run exercising the same
/// entry points with hostile bytes, without a second, instrumented build of every dependency.
@Suite("Fuzz corpora and mutations")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    /// Tokens the mutations splice in: JSON syntax, the protocol's and policies' field names, and
    /// values at the edges.
    static let tokens: [[UInt8]] = [
        "{", "}", "[", "]", "\"", ",", ":", "null", "true", "-0", "1e999", "-1e-999", "18446744073709551616",
        "\\u0000", "\\ud800", "\u{FEFF}", "\"version\"", "\"events\"", "\"uuid\"", "\"kind\"", "\"span\"",
        "\"parameters\"", "\"end_parameters\"", "\"sessions\"", "\"expires_at\"", "\"rules\"", "\"sampling\"",
        "\"rate\"", "\"privacy_zones\"", "\"radius_m\"", "2026-11-21T10:00:00.0000000000000000000000000000001Z",
        "\"**.{a,b,c}.**\"", String(repeating: "[", count: 70),
    ].map { Array($0.utf8) }

    static func seeds(_ target: String) throws -> [[UInt8]] {
        let folder = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            .map { Array(try Data(contentsOf: folder.appendingPathComponent($0))) }
    }

    /// Mutations of the seeds, the same for every run.
    static func mutations(of seeds: [[UInt8]], count: Int, seed: UInt64) -> [[UInt8]] {
        var random = SeededRandom(seed: seed)
        var out = seeds
        out.reserveCapacity(seeds.count + count)
        for _ in 0..<count {
            var bytes = seeds[random.below(seeds.count)]
            for _ in 0...random.below(4) {
                let at = bytes.isEmpty ? 0 : random.below(bytes.count)
                switch random.below(6) {
                case 0 where !bytes.isEmpty: bytes[at] ^= UInt8(1 << random.below(8))
                case 1 where !bytes.isEmpty: bytes[at] = UInt8(truncatingIfNeeded: random.next())
                case 2 where !bytes.isEmpty: bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.below(16)))
                case 3: bytes.insert(contentsOf: tokens[random.below(tokens.count)], at: at)
                case 4 where !bytes.isEmpty:
                    let end = min(bytes.count, at + 1 + random.below(64))
                    bytes.insert(contentsOf: bytes[at..<end], at: at)
                default: bytes = Array(bytes.prefix(at))
                }
            }
            out.append(bytes)
        }
        return out
    }

    @Test("The batch decoder takes the corpus and 30,000 mutations without a crash; what it accepts is a batch")
    func batchDecoder() throws {
        var limits = JSONParser.Limits()
        limits.maxValues = 10_000
        var accepted = 0
        for input in Self.mutations(of: try Self.seeds("FuzzBatchDecoder"), count: 30_000, seed: 1) {
            if let batch = try? BatchDecoder().decode(input, limits: limits) {
                accepted += 1
                #expect(batch.events.count <= 10_000)
            }
        }
        #expect(accepted > 0, "the seeds themselves decode")
    }

    @Test("The policy parser takes the corpus and 30,000 mutations without a crash; what it accepts is in range")
    func policyParser() throws {
        var accepted = 0
        for input in Self.mutations(of: try Self.seeds("FuzzPolicyParser"), count: 30_000, seed: 2) {
            if let policy = try? Policy.parse(Data(input)) {
                accepted += 1
                #expect(policy.rules.sampling.allSatisfy { (0...1).contains($0.rate) })
            }
        }
        #expect(accepted > 0, "the seeds themselves parse")
    }

    @Test("Gzip inflation takes the corpus and 5,000 mutations without a crash and never passes its limit")
    func gzip() throws {
        let limit = 64 * 1024
        for input in Self.mutations(of: try Self.seeds("FuzzGzip"), count: 5_000, seed: 3) {
            do {
                #expect(try Gzip.decompress(input, maxOutputBytes: limit).count <= limit)
            } catch .tooLarge(limit: let reported) {
                #expect(reported == limit)
            } catch {
                // invalid data: what most mutations are
            }
        }
    }
}
