import CZlib

/// gzip through zlib: what `strobe export --format pprof` writes (pprof's
/// `.pb.gz`), and what its tests read back.
enum Gzip {
    /// A zlib call that failed, with its return code.
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "zlib failed (code \(code))" }
    }

    /// `bytes` as one gzip member.
    static func compress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        let started = strobe_deflate_init_gzip(&stream, Z_DEFAULT_COMPRESSION)
        guard started == Z_OK else { throw Failure(code: started) }
        defer { deflateEnd(&stream) }
        var input = bytes
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let code = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard code == Z_STREAM_END else { throw Failure(code: code) }
        return Array(output.prefix(Int(stream.total_out)))
    }

    /// The bytes of a gzip member.
    static func decompress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        let started = strobe_inflate_init_gzip(&stream)
        guard started == Z_OK else { throw Failure(code: started) }
        defer { inflateEnd(&stream) }
        var input = bytes
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var code = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while code == Z_OK {
                chunk.withUnsafeMutableBufferPointer { destination in
                    stream.next_out = destination.baseAddress
                    stream.avail_out = uInt(destination.count)
                    code = inflate(&stream, Z_NO_FLUSH)
                }
                result.append(contentsOf: chunk.prefix(chunk.count - Int(stream.avail_out)))
            }
        }
        guard code == Z_STREAM_END else { throw Failure(code: code) }
        return result
    }
}
