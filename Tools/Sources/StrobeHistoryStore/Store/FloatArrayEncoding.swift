import Foundation

/// Arrays of doubles as the store keeps them: 8 bytes each, IEEE 754,
/// little-endian, one after another.
enum FloatArrayEncoding {
    /// The bytes of `values`.
    static func encode(_ values: [Double]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: values.count * 8)
        bytes.withUnsafeMutableBytes { buffer in
            for (index, value) in values.enumerated() {
                buffer.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: index * 8, as: UInt64.self)
            }
        }
        return bytes
    }

    /// The values in `bytes`; nil when their count is not a multiple of 8.
    static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [Double]? {
        guard bytes.count % 8 == 0 else { return nil }
        var values = [Double](repeating: 0, count: bytes.count / 8)
        let copied: Bool? = bytes.withContiguousStorageIfAvailable { source in
            let raw = UnsafeRawBufferPointer(source)
            for index in values.indices {
                values[index] = Double(
                    bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)))
            }
            return true
        }
        if copied == nil {
            return decode(Array(bytes))
        }
        return values
    }
}
