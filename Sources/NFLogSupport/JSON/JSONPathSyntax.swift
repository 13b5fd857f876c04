/// How an error's `path` names an object member: plainly after a dot when the key is a simple
/// name (`events[3].parameters.screen`), otherwise as a JSON string in brackets
/// (`diagnostics.pruned["ui.tap"]`, `parameters["a b"]`), so a key with a dot, a bracket or a
/// quote in it cannot be read as two steps (docs/PROTOCOL.md, "Error paths").
enum JSONPathSyntax {
    /// `key` as one step of a path: `key` or `["k.e\"y"]`.
    static func member(_ key: String) -> String {
        let plain = key.utf8.first.map { !(0x30...0x39).contains($0) } ?? false
            && key.utf8.allSatisfy { byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5F || byte == 0x2D
            }
        return plain ? key : "[" + quoted(key) + "]"
    }

    /// `member` appended to `path` (a bracketed step follows without a dot).
    static func appending(_ member: String, to path: String) -> String {
        path.isEmpty || member.hasPrefix("[") ? path + member : path + "." + member
    }

    /// `member` put in front of the rest of a path built from the inside out.
    static func prepending(_ member: String, to path: String) -> String {
        path.isEmpty || path.hasPrefix("[") ? member + path : member + "." + path
    }

    private static func quoted(_ key: String) -> String {
        var out = "\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
