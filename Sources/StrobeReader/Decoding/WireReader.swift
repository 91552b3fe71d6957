/// Reads protobuf wire-format fields from a byte range, never past its end.
struct WireReader {
    let base: UnsafePointer<UInt8>
    var position: Int
    let end: Int

    init(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int) {
        self.base = base
        position = start
        self.end = end
    }

    var isAtEnd: Bool { position >= end }

    @inline(__always)
    mutating func varint() -> UInt64? {
        // Most fields fit one byte.
        if position < end, base[position] < 0x80 {
            position += 1
            return UInt64(base[position - 1])
        }
        return longVarint()
    }

    mutating func longVarint() -> UInt64? {
        if case .value(let value) = varintRead() { return value }
        return nil
    }

    /// What reading a varint found: its value, the end of the range inside
    /// it, or more than 64 bits' worth of bytes.
    enum VarintRead {
        case value(UInt64)
        case cutOff
        case tooLong
    }

    /// A varint, or why there is none: a reader that must tell a field cut
    /// off by the end of the bytes from a broken one asks this.
    mutating func varintRead() -> VarintRead {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while position < end {
            let byte = base[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return .value(result) }
            shift += 7
            if shift >= 64 { return .tooLong }
        }
        return .cutOff
    }

    @inline(__always)
    mutating func fixed64() -> UInt64? {
        guard end - position >= 8 else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(base[position + index]) << (8 * UInt64(index)) }
        position += 8
        return value
    }

    /// Consumes the next byte when it is `expected`.
    @inline(__always)
    mutating func take(_ expected: UInt8) -> Bool {
        guard position < end, base[position] == expected else { return false }
        position += 1
        return true
    }

    /// A length-delimited payload as a byte range.
    @inline(__always)
    mutating func lengthDelimited() -> Range<Int>? {
        guard let length = varint(), length <= UInt64(end - position) else { return nil }
        let start = position
        position += Int(length)
        return start..<position
    }

    /// Skips a field of `wireType`; false when the bytes are malformed.
    mutating func skip(wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1: return fixed64() != nil
        case 2: return lengthDelimited() != nil
        case 5:
            guard end - position >= 4 else { return false }
            position += 4
            return true
        default: return false
        }
    }

    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self)
    }
}
