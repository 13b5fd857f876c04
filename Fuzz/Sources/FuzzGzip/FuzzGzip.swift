@_spi(NFLogShared) import NFLogSupport

/// The collector inflates gzip request bodies with a limit on the inflated size (gzip bombs).
/// Here the limit is small so that hitting it is common; the body is also compressed and
/// inflated back, which must give the same bytes.
private let limit = 64 * 1024

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzip(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: start, count: count))

    do {
        let output = try Gzip.decompress(input, maxOutputBytes: limit)
        guard output.count <= limit else { fatalError("inflated \(output.count) bytes past the \(limit)-byte limit") }
    } catch .tooLarge(let reported) {
        guard reported == limit else { fatalError("tooLarge reported limit \(reported), not \(limit)") }
    } catch .zlib(let code) {
        fatalError("zlib failed with \(code) on input data (should be invalidData)")
    } catch {
        // invalidData, expected for most inputs; the collector answers with this text.
        _ = error.description
    }

    let level = Int(input.first ?? 6) % 12 - 1  // -1…10: out-of-range levels are clamped
    do {
        let compressed = try Gzip.compress(input, level: level)
        let restored = try Gzip.decompress(compressed, maxOutputBytes: max(input.count, 1))
        guard restored == input else { fatalError("gzip round trip changed \(input.count) bytes at level \(level)") }
    } catch {
        fatalError("gzip round trip failed at level \(level): \(error)")
    }
    return 0
}
