import PerfettoWire

/// A growable byte buffer with the protobuf wire-format primitives the
/// encoder writes by hand on its hot path.
///
/// A struct over memory it owns, as swift-nio's `ByteBuffer`: the bytes live
/// in a class instance whose `deinit` frees them once no buffer uses them.
/// The pointer and capacity are kept in the buffer itself, so the encoder
/// can work on a local copy in its loops (no exclusivity checks on a class
/// property) and never loads through the class to write.
///
/// Unlike `ByteBuffer` it does not copy on write: a uniqueness check in
/// every append slowed the encoder down in `make bench format`.
/// The encoder moves a buffer rather than copying it (see
/// `TraceEncoder.withRecordEncoder`), so a buffer is written only while it
/// alone holds its memory; debug builds check that on every append.
package struct ProtoBuffer {
    /// The memory, freed with the last buffer that uses it.
    private final class Storage {
        let bytes: UnsafeMutablePointer<UInt8>
        let capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            bytes = .allocate(capacity: capacity)
        }

        deinit { bytes.deallocate() }
    }

    private var storage: Storage
    private(set) var bytes: UnsafeMutablePointer<UInt8>
    package private(set) var count = 0
    private var capacity: Int

    /// An empty buffer with room for `capacity` bytes; 0 allocates almost
    /// nothing (for a buffer that stands in while the real one is lent out).
    package init(capacity: Int = 1 << 16) {
        storage = Storage(capacity: max(capacity, 0))
        bytes = storage.bytes
        self.capacity = storage.capacity
    }

    package mutating func removeAll() { count = 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    package mutating func reserve(_ extra: Int) {
        assert(isKnownUniquelyReferenced(&storage), "a ProtoBuffer is written while a copy shares its memory")
        if count + extra > capacity { grow(toHold: count + extra) }
    }

    /// Moves the bytes into new, larger memory.
    private mutating func grow(toHold needed: Int) {
        var newCapacity = max(capacity * 2, 64)
        while newCapacity < needed { newCapacity *= 2 }
        let newStorage = Storage(capacity: newCapacity)
        newStorage.bytes.update(from: bytes, count: count)
        storage = newStorage
        bytes = newStorage.bytes
        capacity = newCapacity
    }

    @inline(__always)
    package mutating func appendVarint(_ value: UInt64) {
        reserve(10)
        var value = value
        while value >= 0x80 {
            bytes[count] = UInt8(truncatingIfNeeded: value) | 0x80
            count += 1
            value >>= 7
        }
        bytes[count] = UInt8(truncatingIfNeeded: value)
        count += 1
    }

    @inline(__always)
    package mutating func appendFixed64(_ value: UInt64) {
        reserve(8)
        var little = value.littleEndian
        withUnsafeBytes(of: &little) { raw in
            UnsafeMutableRawPointer(bytes + count).copyMemory(from: raw.baseAddress!, byteCount: 8)
        }
        count += 8
    }

    /// Counts `written` bytes stored directly after `reserve`.
    package mutating func advance(by written: Int) {
        count += written
    }

    package mutating func append(_ source: UnsafeRawBufferPointer) {
        guard source.count > 0 else { return }
        reserve(source.count)
        UnsafeMutableRawPointer(bytes + count).copyMemory(from: source.baseAddress!, byteCount: source.count)
        count += source.count
    }

    // MARK: Fields

    @inline(__always)
    package mutating func appendTag(field: UInt32, wireType: UInt8) {
        appendVarint(PerfettoWire.WireType.tag(field, wireType))
    }

    @inline(__always)
    package mutating func appendVarintField(_ field: UInt32, _ value: UInt64) {
        appendTag(field: field, wireType: PerfettoWire.WireType.varint)
        appendVarint(value)
    }

    @inline(__always)
    package mutating func appendFixed64Field(_ field: UInt32, _ value: UInt64) {
        appendTag(field: field, wireType: PerfettoWire.WireType.fixed64)
        appendFixed64(value)
    }

    package mutating func appendStringField(_ field: UInt32, _ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            appendTag(field: field, wireType: PerfettoWire.WireType.lengthDelimited)
            appendVarint(UInt64(utf8.count))
            append(UnsafeRawBufferPointer(utf8))
        }
    }

    package mutating func appendBytesField(_ field: UInt32, _ source: UnsafeRawBufferPointer) {
        appendTag(field: field, wireType: PerfettoWire.WireType.lengthDelimited)
        appendVarint(UInt64(source.count))
        append(source)
    }

    /// Starts a length-delimited field; pass the result to `endMessage`.
    /// One byte is reserved for the length, which suits the short messages the
    /// encoder writes; longer ones are moved up once at the end.
    @inline(__always)
    package mutating func beginMessage(_ field: UInt32) -> Int {
        appendTag(field: field, wireType: PerfettoWire.WireType.lengthDelimited)
        reserve(1)
        count += 1
        return count
    }

    @inline(__always)
    package mutating func endMessage(_ start: Int) {
        reserve(0)
        let length = count - start
        if length < 0x80 {
            bytes[start - 1] = UInt8(length)
            return
        }
        var size = 1
        var rest = UInt64(length) >> 7
        while rest > 0 {
            size += 1
            rest >>= 7
        }
        reserve(size - 1)
        // Overlapping move (memmove).
        UnsafeMutableRawPointer(bytes + start + size - 1).copyMemory(from: bytes + start, byteCount: length)
        var value = UInt64(length)
        var position = start - 1
        while value >= 0x80 {
            bytes[position] = UInt8(truncatingIfNeeded: value) | 0x80
            position += 1
            value >>= 7
        }
        bytes[position] = UInt8(truncatingIfNeeded: value)
        count += size - 1
    }

    /// The bytes written so far.
    package func withBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
