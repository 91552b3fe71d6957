/// A growable buffer of bytes written through a pointer, for the hottest
/// encoding (a streaming export's spans): room is made once per span, then
/// the span is written through a ``ByteCursor`` with no check per byte.
final class ByteBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    /// Bytes written.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written, copied out.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The bytes from `offset` on, copied out.
    func bytes(from offset: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: base + offset, count: count - offset))
    }

    /// Forgets what was written, keeping the storage.
    func reset() {
        count = 0
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    private func grow(_ needed: Int) {
        var larger = capacity
        while larger < needed { larger *= 2 }
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        storage.update(from: base, count: count)
        base.deallocate()
        base = storage
        capacity = larger
    }

    /// Writes through a cursor into room made beforehand with ``reserve(_:)``.
    @inline(__always)
    func write(_ body: (inout ByteCursor) -> Void) {
        var cursor = ByteCursor(position: base + count)
        body(&cursor)
        count = cursor.position - base
    }

    /// Appends `bytes`, making room for them.
    func append(_ bytes: [UInt8]) {
        reserve(bytes.count)
        write { $0.put(bytes) }
    }

    /// Leaves `count` bytes to be written later (with `write(_:at:)`).
    func skip(_ count: Int) {
        reserve(count)
        self.count += count
    }

    /// Writes `bytes` over bytes already counted, from `offset` on.
    func write(_ bytes: [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset + bytes.count <= count)
        var cursor = ByteCursor(position: base + offset)
        cursor.put(bytes)
    }

    /// The bytes a varint of `value` takes.
    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        var size = 1
        var rest = value >> 7
        while rest != 0 {
            size += 1
            rest >>= 7
        }
        return size
    }
}

/// Where the next byte goes, in room made beforehand.
struct ByteCursor {
    var position: UnsafeMutablePointer<UInt8>

    @inline(__always)
    mutating func put(_ byte: UInt8) {
        position.pointee = byte
        position += 1
    }

    @inline(__always)
    mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { source in
            guard let start = source.baseAddress else { return }
            copy(start, source.count)
        }
    }

    /// Copies `count` bytes from `source`; a few bytes by hand, which is
    /// cheaper than a call for the short fields of a span.
    @inline(__always)
    mutating func copy(_ source: UnsafePointer<UInt8>, _ count: Int) {
        if count <= 48 {
            for index in 0..<count { position[index] = source[index] }
        } else {
            position.update(from: source, count: count)
        }
        position += count
    }

    @inline(__always)
    mutating func putVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            put(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        put(UInt8(rest))
    }

    /// A string's UTF-8 bytes.
    @inline(__always)
    mutating func put(utf8 text: String) {
        var text = text
        text.withUTF8 { source in
            guard let start = source.baseAddress else { return }
            copy(start, source.count)
        }
    }

    /// Eight bytes, least significant first (`fixed64`).
    @inline(__always)
    mutating func putLittleEndian(_ value: UInt64) {
        UnsafeMutableRawPointer(position).storeBytes(of: value.littleEndian, as: UInt64.self)
        position += 8
    }

    /// Eight bytes, most significant first (a span id).
    @inline(__always)
    mutating func putBigEndian(_ value: UInt64) {
        UnsafeMutableRawPointer(position).storeBytes(of: value.bigEndian, as: UInt64.self)
        position += 8
    }
}
