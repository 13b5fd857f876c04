@_spi(NFLogShared) import NFLogSupport

/// Event names made from text the SDK does not control (a logger's label, a span's operation
/// name, a metric's label): always valid, so that a library's odd label never costs its events.
enum EventNames {
    /// `prefix` (itself a valid name, or empty) followed by `text`'s parts: a character that is
    /// not an ASCII letter, digit, `_` or `-` becomes `_`, empty parts (`a..b`, a leading dot)
    /// are dropped, and the name stops before the first part that would pass the name limit
    /// (the first part is cut instead). `fallback` stands for a text with no part at all.
    static func make(prefix: String, _ text: String, fallback: String) -> String {
        var name = prefix
        let limit = EventNameRules.maxNameBytes
        var part = ""
        var full = false
        func close() {
            defer { part = "" }
            guard !part.isEmpty, !full else { return }
            let separator = name.isEmpty ? 0 : 1
            if name.utf8.count + separator + part.utf8.count <= limit {
                name += (separator == 1 ? "." : "") + part
            } else if name.isEmpty || name == prefix {
                // The first part alone is too long: keep what fits (ASCII: bytes are characters).
                let room = limit - name.utf8.count - separator
                if room > 0 { name += (separator == 1 ? "." : "") + part.prefix(room) }
                full = true
            } else {
                full = true
            }
        }
        for scalar in text.unicodeScalars {
            if scalar == "." {
                close()
            } else if scalar.isASCII, EventNameRules.isPartByte(UInt8(scalar.value)) {
                part.unicodeScalars.append(scalar)
            } else {
                part += "_"
            }
        }
        close()
        if name == prefix && !fallback.isEmpty { name += name.isEmpty ? fallback : "." + fallback }
        return name
    }
}
