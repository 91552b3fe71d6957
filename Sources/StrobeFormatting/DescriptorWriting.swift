#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing a whole buffer to a file descriptor, as every writer of Strobe's
/// files does: on after a short write or an interrupted call, stopping at
/// the first failure.
public enum DescriptorWriting {
    /// Writes all of `bytes` to `descriptor`; how many bytes were written,
    /// and the `errno` of the failure that stopped it, if one did.
    public static func writeAll(
        _ bytes: some Collection<UInt8>, to descriptor: Int32
    ) -> (written: Int, failure: Int32?) {
        let outcome = bytes.withContiguousStorageIfAvailable { buffer in
            writeAll(UnsafeRawBufferPointer(buffer), to: descriptor)
        }
        if let outcome { return outcome }
        return Array(bytes).withUnsafeBytes { writeAll($0, to: descriptor) }
    }

    private static func writeAll(_ raw: UnsafeRawBufferPointer, to descriptor: Int32) -> (written: Int, failure: Int32?)
    {
        var written = 0
        while written < raw.count {
            let count = systemWrite(descriptor, raw.baseAddress! + written, raw.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                return (written, errno)
            }
            written += count
        }
        return (written, nil)
    }
}

/// The C library's `write`, named apart from the methods called `write`.
private func systemWrite(_ descriptor: Int32, _ source: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, source, count)
}
