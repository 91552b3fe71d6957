/// A growable buffer of bytes written through a pointer, for the hottest
/// encoding (a streaming export's spans): room is made once per span, then
/// each byte is stored with no check.
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

    /// Forgets what was written, keeping the storage.
    func reset() {
        count = 0
    }

    /// Leaves `count` bytes to be written later (with `write(_:at:)`).
    func skip(_ count: Int) {
        reserve(count)
        self.count += count
    }

    /// Writes `bytes` over bytes already counted, from `offset` on.
    func write(_ bytes: [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset + bytes.count <= count)
        bytes.withUnsafeBufferPointer { source in
            guard let start = source.baseAddress else { return }
            (base + offset).update(from: start, count: source.count)
        }
    }

    /// The bytes from `offset` on, copied out.
    func bytes(from offset: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: base + offset, count: count - offset))
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

    // The writes below assume room was made.

    @inline(__always)
    func put(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { source in
            guard let start = source.baseAddress else { return }
            copy(start, source.count)
        }
    }

    /// Copies `count` bytes from `source`; a few bytes by hand, which is
    /// cheaper than a call for the short fields of a span.
    @inline(__always)
    private func copy(_ source: UnsafePointer<UInt8>, _ count: Int) {
        let target = base + self.count
        if count <= 48 {
            for index in 0..<count { target[index] = source[index] }
        } else {
            target.update(from: source, count: count)
        }
        self.count += count
    }

    @inline(__always)
    func putVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            put(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        put(UInt8(rest))
    }

    /// `count` bytes of `source` from `offset` on.
    @inline(__always)
    func put(from source: ByteBuffer, offset: Int, count: Int) {
        copy(source.base + offset, count)
    }

    /// A string's UTF-8 bytes.
    @inline(__always)
    func put(utf8 text: String) {
        var text = text
        text.withUTF8 { source in
            guard let start = source.baseAddress else { return }
            copy(start, source.count)
        }
    }

    /// Eight bytes, least significant first (`fixed64`).
    @inline(__always)
    func putLittleEndian(_ value: UInt64) {
        UnsafeMutableRawPointer(base + count).storeBytes(of: value.littleEndian, as: UInt64.self)
        count += 8
    }

    /// Eight bytes, most significant first (a span id).
    @inline(__always)
    func putBigEndian(_ value: UInt64) {
        UnsafeMutableRawPointer(base + count).storeBytes(of: value.bigEndian, as: UInt64.self)
        count += 8
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
