import Foundation
@_spi(NFLogShared) import NFLogSupport
import Testing

/// `JSONWriter.writeString` escapes straight into the writer's own memory, grown as it goes: its
/// bytes must be exactly the escaping the protocol documents, whatever the length, from a
/// writer too small for the first string.
@Suite("JSONWriter: strings written as the protocol escapes them")
struct JSONWriterTests {
    /// The documented escaping, written the plain way: `\"`, `\\`, `\n`, `\r`, `\t`, other
    /// control bytes as `\u00xx` (lowercase hex), every other byte as it is.
    static func reference(_ string: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case UInt8(ascii: "\n"): out += Array("\\n".utf8)
            case UInt8(ascii: "\r"): out += Array("\\r".utf8)
            case UInt8(ascii: "\t"): out += Array("\\t".utf8)
            case ..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    @Test("Every length from 0 to 300 (the writer growing many times), random text with quotes, backslashes, control bytes and multi-byte characters: the reference bytes, and JSON that reads back as the string")
    func matchesReference() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "é", "€", "😀", "/"]
        for length in 0...300 {
            for _ in 0..<3 {
                let string = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
                var writer = JSONWriter(capacity: 8)
                writer.writeString(string)
                #expect(writer.bytes == Self.reference(string), "length \(length)")
                let decoded = try JSONSerialization.jsonObject(with: Data(writer.bytes), options: .fragmentsAllowed) as? String
                #expect(decoded == string, "length \(length)")
            }
        }
    }

    @Test("A member's comma and colon go around the key; the empty string; after other output")
    func beforeAndAfter() {
        var writer = JSONWriter(capacity: 0)
        writer.writeLiteral("{")
        writer.writeString("a\"b", after: UInt8(ascii: ":"))
        writer.writeString("")
        writer.writeString("k", before: UInt8(ascii: ","), after: UInt8(ascii: ":"))
        writer.writeInteger(-9_223_372_036_854_775_808)
        writer.writeLiteral("}")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a\"b":"","k":-9223372036854775808}"#)
    }

    @Test("Thousands of mixed writes into one writer (strings, integers, UUIDs, raw bytes, literals, keys) give the bytes of each piece in order, across every growth; removeAll starts over")
    func manyWritesOneWriter() {
        var generator = SystemRandomNumberGenerator()
        var writer = JSONWriter(capacity: 0)
        var expected: [UInt8] = []
        for round in 0..<4_000 {
            switch round % 6 {
            case 0:
                let string = String(repeating: "é\"x\n", count: Int.random(in: 0...40, using: &generator))
                writer.writeString(string)
                expected += Self.reference(string)
            case 1:
                let value = Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0...63, using: &generator)
                writer.writeInteger(value)
                expected += Array(String(value).utf8)
            case 2:
                let id = UUID()
                writer.writeUUID(id)
                expected += Array("\"\(id.uuidString.lowercased())\"".utf8)
            case 3:
                let raw = (0..<Int.random(in: 0...300, using: &generator)).map { UInt8(truncatingIfNeeded: $0) }
                writer.writeRaw(raw)
                expected += raw
            case 4:
                writer.writeLiteral(",")
                writer.writeByte(UInt8(ascii: "["))
                expected += Array(",[".utf8)
            default:
                writer.writeKey("key")
                expected += Array("\"key\":".utf8)
            }
        }
        #expect(writer.count == expected.count)
        #expect(writer.bytes == expected)
        writer.removeAll()
        writer.writeInteger(0)
        #expect(writer.bytes == Array("0".utf8))
    }
}
