import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes events to the kernel's ftrace `trace_marker` file in the text
/// format that Perfetto and systrace read from ftrace captures.
///
/// One line per event, each written with a single `write`:
///
/// | event | line |
/// |---|---|
/// | begin | `B|pid|name` |
/// | end | `E|pid` |
/// | instant | `I|pid|name` |
/// | counter | `C|pid|name|value` (floating-point values rounded to an integer) |
/// | async begin | `S|pid|name|cookie` |
/// | async end | `F|pid|name|cookie` |
///
/// `pid` is the process id; the kernel stamps each line with the writing
/// thread, so begins and ends land on the right thread. A `|` or line break
/// in a name becomes a space, and lines are cut at 1 KiB.
final class FtraceMarker: SignpostSink {
    /// Where tracefs offers the marker, newest mount point first.
    static let candidatePaths = ["/sys/kernel/tracing/trace_marker", "/sys/kernel/debug/tracing/trace_marker"]

    /// The first writable marker, or nil when tracefs offers none.
    static func defaultPath() -> String? {
        candidatePaths.first { access($0, W_OK) == 0 }
    }

    /// The longest line written, newline included.
    static let maximumLineLength = 1024

    /// The file written to.
    let path: String
    private let descriptor: Int32
    private let processID: Int64

    /// Opens `path`, or the first writable tracefs marker when it is nil.
    ///
    /// - Throws: ``TraceSessionError/signpostsUnavailable(_:path:errno:)`` naming the
    ///   file and the reason.
    init(path: String?) throws(TraceSessionError) {
        guard let path = path ?? Self.defaultPath() else {
            throw .signpostsUnavailable(
                "no writable ftrace trace_marker (tried \(Self.candidatePaths.joined(separator: ", "))): "
                    + "mount tracefs and give the process write access, or set ftraceMarkerPath")
        }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw .signpostsUnavailable("cannot open for writing: \(ErrnoText.message(code))", path: path, errno: code)
        }
        self.path = path
        self.descriptor = descriptor
        processID = Int64(getpid())
    }

    deinit {
        close(descriptor)
    }

    func begin(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64) {
        writeLine(phase: "B", name: name)
    }

    func end(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64) {
        writeLine(phase: "E", name: nil)
    }

    func instant(_ name: UnsafeBufferPointer<UInt8>) {
        writeLine(phase: "I", name: name)
    }

    func counter(_ name: UnsafeBufferPointer<UInt8>, value: SignpostCounterValue) {
        switch value {
        case .integer(let integer):
            writeLine(phase: "C", name: name, number: integer)
        case .floatingPoint(let double):
            writeLine(phase: "C", name: name, number: Self.rounded(double))
        }
    }

    func asyncBegin(_ name: UnsafeBufferPointer<UInt8>, id: UInt64) {
        writeLine(phase: "S", name: name, number: Int64(bitPattern: id))
    }

    func asyncEnd(_ name: UnsafeBufferPointer<UInt8>, id: UInt64) {
        writeLine(phase: "F", name: name, number: Int64(bitPattern: id))
    }

    /// `value` rounded to the nearest integer the format can carry.
    static func rounded(_ value: Double) -> Int64 {
        guard value.isFinite else { return value.isNaN ? 0 : (value > 0 ? .max : .min) }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value.rounded())
    }

    /// Writes `phase|pid[|name][|number]\n` in one system call, from the stack.
    private func writeLine(phase: Unicode.Scalar, name: UnsafeBufferPointer<UInt8>?, number: Int64? = nil) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumLineLength) { buffer in
            var line = LineWriter(buffer: buffer)
            line.append(UInt8(ascii: phase))
            line.append(UInt8(ascii: "|"))
            line.append(decimal: processID)
            if let name {
                line.append(UInt8(ascii: "|"))
                // Keep room for the number that follows.
                line.append(name: name, reserving: number == nil ? 0 : 21)
            }
            if let number {
                line.append(UInt8(ascii: "|"))
                line.append(decimal: number)
            }
            line.append(UInt8(ascii: "\n"))
            _ = write(descriptor, buffer.baseAddress, line.count)
        }
    }
}

/// Fills a fixed buffer, always leaving the last byte for the newline.
private struct LineWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var count = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    mutating func append(_ byte: UInt8) {
        let limit = byte == UInt8(ascii: "\n") ? buffer.count : buffer.count - 1
        guard count < limit else { return }
        buffer[count] = byte
        count += 1
    }

    mutating func append(decimal value: Int64) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var magnitude = value.magnitude
        var used = 0
        withUnsafeMutableBytes(of: &digits) { digits in
            repeat {
                digits[used] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                used += 1
            } while magnitude > 0
            if value < 0 { append(UInt8(ascii: "-")) }
            for index in stride(from: used - 1, through: 0, by: -1) { append(digits[index]) }
        }
    }

    /// Appends a name with `|` and line breaks turned into spaces, stopping
    /// `reserving` bytes before the end (at a character boundary).
    mutating func append(name: UnsafeBufferPointer<UInt8>, reserving: Int) {
        let room = max(0, buffer.count - 1 - reserving - count)
        var length = min(name.count, room)
        // Do not split a UTF-8 sequence: back up over continuation bytes.
        if length < name.count {
            while length > 0, name[length] & 0xC0 == 0x80 { length -= 1 }
        }
        for index in 0..<length {
            let byte = name[index]
            append(
                byte == UInt8(ascii: "|") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                    ? UInt8(ascii: " ") : byte)
        }
    }
}
