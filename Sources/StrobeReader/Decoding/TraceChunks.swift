import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A trace file read in parts, so that memory holds one part at a time:
/// the streaming readers' input. A reader reads the whole packets of a part
/// and leaves the one cut off at its end for the next; the last part holds
/// whatever is left, cut-off or broken bytes included, so that the reader
/// reports them as a whole-file read does.
///
/// A part is about ``partSize`` bytes; a packet larger than that makes its
/// part as large as the packet.
final class TraceChunks {
    /// The file's path, named in problems.
    let path: String
    /// The file's size when it was opened.
    let size: Int
    /// The first bytes of the file, for saying why it is not a trace.
    private(set) var prefix: [UInt8] = []
    /// Bytes handed out so far.
    var offset: Int { origin + handed }

    static let partSize = 1 << 20

    private let descriptor: Int32
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes of the file in the buffer, from `origin` on.
    private var filled = 0
    /// Bytes of the buffer handed out by the last part.
    private var handed = 0
    private var origin = 0
    private var atEnd = false
    private var finished = false

    /// Opens the regular file at `path`.
    init(path: String, partSize: Int = TraceChunks.partSize) throws(TraceReadError) {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TraceReadError(
                path: path, offset: 0, problem: "cannot open: \(ErrnoText.message(errno))", errno: errno)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let failure = errno
            close(descriptor)
            throw TraceReadError(
                path: path, offset: 0, problem: "cannot stat: \(ErrnoText.message(failure))", errno: failure)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw TraceReadError(path: path, offset: 0, problem: "not a regular file")
        }
        self.descriptor = descriptor
        size = Int(status.st_size)
        capacity = max(partSize, 64)
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
        close(descriptor)
    }

    /// Hands the next part to `body`: its bytes, their count, the offset in
    /// the file of the first, and whether it is the last part. `body`
    /// returns how many bytes it read: all of them in the last part; in
    /// another, those up to the first field it could not read whole, which
    /// comes again at the start of the next part. False once the file is
    /// read.
    func next(_ body: (UnsafePointer<UInt8>, Int, Int, Bool) -> Int) throws(TraceReadError) -> Bool {
        guard !finished else { return false }
        if handed > 0 {
            let left = filled - handed
            if left > 0 { buffer.update(from: buffer + handed, count: left) }
            origin += handed
            filled = left
            handed = 0
        }
        while true {
            try fill()
            if atEnd {
                finished = true
                handed = filled
                _ = body(buffer, filled, origin, true)
                return true
            }
            let read = min(body(buffer, filled, origin, false), filled)
            if read < filled {
                let (end, isBroken) = Self.wholeFields(
                    buffer + read, count: filled - read, remaining: size - origin - read)
                if isBroken || end > 0 {
                    // Not merely cut off by the end of the part: the rest is
                    // the last part, and the reader says what is wrong there.
                    finished = true
                    handed = filled
                    _ = body(buffer + read, filled - read, origin + read, true)
                    return true
                }
            }
            if read > 0 {
                handed = read
                return true
            }
            // One field larger than the buffer: make room for it.
            capacity *= 2
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            larger.update(from: buffer, count: filled)
            buffer.deallocate()
            buffer = larger
        }
    }

    /// Reads until the buffer is full or the file ends.
    private func fill() throws(TraceReadError) {
        while !atEnd, filled < capacity {
            let count = read(descriptor, buffer + filled, capacity - filled)
            if count < 0 {
                if errno == EINTR { continue }
                let failure = errno
                throw TraceReadError(
                    path: path, offset: origin + filled, problem: "read failed: \(ErrnoText.message(failure))",
                    errno: failure)
            }
            if count == 0 {
                atEnd = true
                break
            }
            if origin == 0, prefix.count < 16 {
                prefix = Array(UnsafeBufferPointer(start: buffer, count: min(filled + count, 16)))
            }
            filled += count
        }
    }

    /// Where the whole top-level fields at the start of `count` bytes end,
    /// and whether a field after them is broken (not merely cut off by the
    /// end of the bytes): a tag no trace field has, a varint too long, or a
    /// length past the end of the file (`remaining` bytes from `base` on).
    static func wholeFields(
        _ base: UnsafePointer<UInt8>, count: Int, remaining: Int
    ) -> (end: Int, isBroken: Bool) {
        var reader = WireReader(base, from: 0, to: count)
        var end = 0
        // The next varint; nil where the bytes end inside it, or where it is
        // too long, which breaks the field.
        var isBroken = false
        func varint() -> UInt64? {
            switch reader.varintRead() {
            case .value(let value): return value
            case .cutOff: return nil
            case .tooLong:
                isBroken = true
                return nil
            }
        }
        while !reader.isAtEnd {
            guard let key = varint() else { return (end, isBroken) }
            let field = key >> 3
            let wireType = key & 7
            if field == 0 || ![0, 1, 2, 5].contains(wireType) { return (end, true) }
            switch wireType {
            case 0:
                guard varint() != nil else { return (end, isBroken) }
            case 1, 5:
                let width = wireType == 1 ? 8 : 4
                guard count - reader.position >= width else { return (end, false) }
                reader.position += width
            default:
                guard let length = varint() else { return (end, isBroken) }
                if length > UInt64(max(remaining - reader.position, 0)) { return (end, true) }
                guard length <= UInt64(count - reader.position) else { return (end, false) }
                reader.position += Int(length)
            }
            end = reader.position
        }
        return (end, false)
    }
}
