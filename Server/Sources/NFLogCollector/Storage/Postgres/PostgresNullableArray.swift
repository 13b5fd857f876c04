import NIOCore
import PostgresNIO

/// A one-dimensional PostgreSQL array whose elements may be NULL, in the binary format.
///
/// postgres-nio encodes `[Element]` but not `[Element?]`; a batch's optional columns (a span's
/// end, parameters, a transaction) travel as such arrays into one `unnest(…)` per batch, so the
/// insert stays one statement however many events the batch holds.
struct PostgresNullableArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>: PostgresNonThrowingEncodable {
    let elements: [Element?]

    init(_ elements: [Element?]) { self.elements = elements }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    /// PostgreSQL's array_recv layout: dimensions, has-nulls flag, element type, then per
    /// dimension its length and lower bound, then each element as a length (-1: NULL) and bytes.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            if let element {
                // The element's length, then its bytes (postgres-nio's encodeRaw is internal).
                let lengthIndex = buffer.writerIndex
                buffer.writeInteger(0, as: Int32.self)
                element.encode(into: &buffer, context: context)
                buffer.setInteger(Int32(buffer.writerIndex - lengthIndex - 4), at: lengthIndex)
            } else {
                buffer.writeInteger(-1, as: Int32.self)
            }
        }
    }
}
