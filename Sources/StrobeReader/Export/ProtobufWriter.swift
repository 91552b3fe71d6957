/// A small protobuf writer for the binary exports (pprof, OTLP): fields are
/// appended in the order they are written, each with its tag; a nested
/// message is written into a writer of its own and appended as bytes.
struct ProtobufWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    /// Appends `value` as a base-128 varint, with no tag.
    mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private mutating func appendTag(_ field: UInt32, _ wireType: UInt8) {
        appendVarint(UInt64(field) << 3 | UInt64(wireType))
    }

    /// A varint field (wire type 0); a zero is written too, as proto2 does.
    mutating func varint(_ field: UInt32, _ value: UInt64) {
        appendTag(field, 0)
        appendVarint(value)
    }

    /// A signed varint field (`int64`: two's complement, not zigzag).
    mutating func int64(_ field: UInt32, _ value: Int64) {
        varint(field, UInt64(bitPattern: value))
    }

    /// A `fixed64` field (wire type 1), little-endian.
    mutating func fixed64(_ field: UInt32, _ value: UInt64) {
        appendTag(field, 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A `double` field (wire type 1).
    mutating func double(_ field: UInt32, _ value: Double) {
        fixed64(field, value.bitPattern)
    }

    /// A length-delimited field holding `data`.
    mutating func bytes(_ field: UInt32, _ data: [UInt8]) {
        appendTag(field, 2)
        appendVarint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    /// A string field, as UTF-8.
    mutating func string(_ field: UInt32, _ text: String) {
        bytes(field, Array(text.utf8))
    }

    /// A nested message, built by `build` in a writer of its own.
    mutating func message(_ field: UInt32, _ build: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        build(&nested)
        bytes(field, nested.bytes)
    }

    /// A packed repeated varint field; nothing when `values` is empty.
    mutating func packed(_ field: UInt32, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var packed = ProtobufWriter()
        for value in values { packed.appendVarint(value) }
        bytes(field, packed.bytes)
    }
}
