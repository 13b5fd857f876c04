import CZlib

/// Why gzip data could not be produced or read.
@_spi(NFLogShared) public enum GzipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is not a well-formed gzip member (bad header, corrupt data, truncated, trailing bytes).
    case invalidData(String)
    /// Inflating would produce more than the caller's limit (a gzip bomb, or just too much).
    case tooLarge(limit: Int)
    /// zlib failed in a way that does not depend on the input (out of memory).
    case zlib(code: Int32)

    @_spi(NFLogShared) public var description: String {
        switch self {
        case .invalidData(let reason): "not valid gzip data: \(reason)"
        case .tooLarge(let limit): "gzip data inflates to more than \(limit) bytes"
        case .zlib(let code): "zlib failed with code \(code)"
        }
    }
}

/// gzip (RFC 1952) through the system's zlib.
@_spi(NFLogShared) public enum Gzip {
    /// Compresses `input` into one gzip member.
    /// - Parameter level: 0 (store) … 9 (smallest); out-of-range values are clamped.
    @_spi(NFLogShared) public static func compress(_ input: UnsafeRawBufferPointer, level: Int) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16 asks zlib for a gzip header and trailer instead of zlib's.
        let rc = deflateInit2_(&stream, Int32(min(max(level, 0), 9)), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                               zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw .zlib(code: rc) }
        defer { deflateEnd(&stream) }

        let capacity = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: capacity)
        let result = output.withUnsafeMutableBytes { out -> Int32 in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(out.count)
            return deflate(&stream, Z_FINISH)
        }
        // deflateBound guarantees room for everything in one call.
        guard result == Z_STREAM_END else { throw .zlib(code: result) }
        output.removeLast(capacity - Int(stream.total_out))
        return output
    }

    @_spi(NFLogShared) public static func compress(_ input: [UInt8], level: Int) throws(GzipError) -> [UInt8] {
        var result: Result<[UInt8], GzipError> = .success([])
        input.withUnsafeBytes { bytes in
            do throws(GzipError) { result = .success(try compress(bytes, level: level)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// Inflates one gzip member, refusing to produce more than `maxOutputBytes`: the limit is
    /// enforced while inflating, so a small bomb never gets to allocate its payload.
    @_spi(NFLogShared) public static func decompress(_ input: UnsafeRawBufferPointer, maxOutputBytes: Int) throws(GzipError) -> [UInt8] {
        guard input.count >= 18 else { throw .invalidData("\(input.count) bytes is shorter than any gzip member") }
        guard input[0] == 0x1F, input[1] == 0x8B else { throw .invalidData("the gzip magic bytes are missing") }
        var stream = z_stream()
        // windowBits 15 + 16: gzip only, so zlib or raw deflate data is refused.
        let rc = inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw .zlib(code: rc) }
        defer { inflateEnd(&stream) }

        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(max(input.count * 4, 16 * 1024), 1 << 20))
        while true {
            let (status, produced) = chunk.withUnsafeMutableBytes { out -> (Int32, Int) in
                stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                let status = inflate(&stream, Z_NO_FLUSH)
                return (status, out.count - Int(stream.avail_out))
            }
            guard output.count + produced <= maxOutputBytes else { throw .tooLarge(limit: maxOutputBytes) }
            output.append(contentsOf: chunk[0..<produced])
            switch status {
            case Z_STREAM_END:
                guard stream.avail_in == 0 else { throw .invalidData("\(stream.avail_in) bytes follow the gzip member") }
                return output
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.avail_in == 0:
                throw .invalidData("the data ends before the gzip member does (truncated)")
            case Z_DATA_ERROR, Z_NEED_DICT, Z_BUF_ERROR:
                let message = stream.msg.map { String(cString: $0) } ?? "corrupt deflate data"
                throw .invalidData(message)
            default:
                throw .zlib(code: status)
            }
        }
    }

    @_spi(NFLogShared) public static func decompress(_ input: [UInt8], maxOutputBytes: Int) throws(GzipError) -> [UInt8] {
        var result: Result<[UInt8], GzipError> = .success([])
        input.withUnsafeBytes { bytes in
            do throws(GzipError) { result = .success(try decompress(bytes, maxOutputBytes: maxOutputBytes)) } catch { result = .failure(error) }
        }
        return try result.get()
    }
}
