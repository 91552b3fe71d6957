/// A small protobuf writer for the binary exports (pprof, OTLP): fields are
/// appended in the order they are written, each with its tag; a nested
/// message is written in place, its length filled in after it.
struct ProtobufWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    /// How many bytes are written.
    var count: Int { bytes.count }

    /// Forgets what was written, keeping the storage for the next message.
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

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

    /// Appends bytes already encoded (whole fields).
    mutating func append(_ encoded: [UInt8]) {
        bytes.append(contentsOf: encoded)
    }

    /// A field of 8 bytes holding `value` most significant byte first: a
    /// span or trace id's half.
    mutating func id(_ field: UInt32, _ value: UInt64) {
        appendTag(field, 2)
        bytes.append(8)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// A string field, as UTF-8.
    mutating func string(_ field: UInt32, _ text: String) {
        appendTag(field, 2)
        let utf8 = text.utf8
        appendVarint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// A nested message, built by `build` in place: its length is written
    /// once it is known, moving the message only when that takes more than
    /// one byte.
    mutating func message(_ field: UInt32, _ build: (inout ProtobufWriter) -> Void) {
        appendTag(field, 2)
        let lengthAt = bytes.count
        bytes.append(0)
        build(&self)
        var length = bytes.count - lengthAt - 1
        var size = 1
        while length >> (7 * size) != 0 { size += 1 }
        if size > 1 { bytes.insert(contentsOf: repeatElement(0, count: size - 1), at: lengthAt + 1) }
        for index in 0..<size {
            bytes[lengthAt + index] = UInt8(truncatingIfNeeded: length) | (index < size - 1 ? 0x80 : 0)
            length >>= 7
        }
    }

    /// A packed repeated varint field; nothing when `values` is empty.
    mutating func packed(_ field: UInt32, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        message(field) { packed in
            for value in values { packed.appendVarint(value) }
        }
    }
}
