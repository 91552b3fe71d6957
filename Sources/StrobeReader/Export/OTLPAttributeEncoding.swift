/// A span's arguments as OTLP `KeyValue` attributes, sized and written in
/// place through a ``ByteCursor``: the bytes ``OTLPExport/keyValue(_:_:_:_:)``
/// writes for each, in the order of their keys.
enum OTLPAttributeEncoding {
    /// The bytes `arguments` take as attributes (field 9 of a span).
    static func size(_ arguments: ArgumentList) -> Int {
        if arguments.pairs.count == 1 { return size(arguments.pairs[0].0, arguments.pairs[0].1) }
        var total = 0
        for (key, value) in arguments.sorted { total += size(key, value) }
        return total
    }

    private static func size(_ key: String, _ value: TraceArgument) -> Int {
        let pair = pairSize(key, value)
        return 1 + ByteBuffer.varintSize(UInt64(pair)) + pair
    }

    /// Writes `arguments` as attributes; room was made for ``size(_:)``.
    static func put(_ arguments: ArgumentList, into buffer: inout ByteCursor) {
        if arguments.pairs.count == 1 { return put(arguments.pairs[0].0, arguments.pairs[0].1, into: &buffer) }
        for (key, value) in arguments.sorted { put(key, value, into: &buffer) }
    }

    private static func put(_ key: String, _ value: TraceArgument, into buffer: inout ByteCursor) {
        buffer.put(0x4a)
        buffer.putVarint(UInt64(pairSize(key, value)))
        buffer.put(0x0a)
        buffer.putVarint(UInt64(key.utf8.count))
        buffer.put(utf8: key)
        buffer.put(0x12)
        buffer.putVarint(UInt64(anyValueSize(value)))
        switch value {
        case .string(let text):
            buffer.put(0x0a)
            buffer.putVarint(UInt64(text.utf8.count))
            buffer.put(utf8: text)
        case .bool(let flag):
            buffer.put(0x10)
            buffer.put(flag ? 1 : 0)
        case .int(let number):
            buffer.put(0x18)
            buffer.putVarint(UInt64(bitPattern: number))
        case .uint(let number):
            buffer.put(0x18)
            buffer.putVarint(number)
        case .double(let number):
            buffer.put(0x21)
            buffer.putLittleEndian(number.bitPattern)
        }
    }

    /// The bytes of a `KeyValue`'s fields.
    private static func pairSize(_ key: String, _ value: TraceArgument) -> Int {
        let keyBytes = key.utf8.count
        let any = anyValueSize(value)
        return 1 + ByteBuffer.varintSize(UInt64(keyBytes)) + keyBytes + 1 + ByteBuffer.varintSize(UInt64(any)) + any
    }

    /// The bytes of an `AnyValue`'s field.
    private static func anyValueSize(_ value: TraceArgument) -> Int {
        switch value {
        case .string(let text): 1 + ByteBuffer.varintSize(UInt64(text.utf8.count)) + text.utf8.count
        case .bool: 2
        case .int(let number): 1 + ByteBuffer.varintSize(UInt64(bitPattern: number))
        case .uint(let number): 1 + ByteBuffer.varintSize(number)
        case .double: 9
        }
    }
}
