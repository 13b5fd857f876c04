public import Foundation

extension UUID {
    /// Parses the canonical 36-character form (8-4-4-4-12 hex digits, either case).
    ///
    /// Foundation's `UUID(uuidString:)` goes through `sscanf` on Linux, which showed up as a tenth
    /// of the collector's time; this is a plain loop.
    @_spi(NFLogShared) public init?(canonical text: String) {
        var text = text
        let parsed: uuid_t? = text.withUTF8 { bytes -> uuid_t? in
            guard bytes.count == 36 else { return nil }
            var out: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var ok = true
            withUnsafeMutableBytes(of: &out) { raw in
                var position = 0
                for index in 0..<16 {
                    if position == 8 || position == 13 || position == 18 || position == 23 {
                        guard bytes[position] == UInt8(ascii: "-") else { ok = false; return }
                        position += 1
                    }
                    guard let high = Hex.value(bytes[position]), let low = Hex.value(bytes[position + 1]) else {
                        ok = false
                        return
                    }
                    raw[index] = high << 4 | low
                    position += 2
                }
            }
            return ok ? out : nil
        }
        guard let parsed else { return nil }
        self.init(uuid: parsed)
    }
}
