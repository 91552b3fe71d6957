import PerfettoWire
import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads Perfetto protobuf traces: the files Strobe writes, and Perfetto
/// traces that use the same subset of the schema.
///
/// It follows the rules of Perfetto's trace processor: per-sequence interned
/// names and defaults, incremental clocks converted to CLOCK_BOOTTIME through
/// clock snapshots, packets that need lost incremental state skipped, slices
/// stacked per track. Dense event packets are decoded by hand; every other
/// packet goes through protobuf-c.
///
/// ```swift
/// let trace = try TraceReader.read(contentsOf: "app.pftrace")
/// for interval in trace.intervals(named: "lens apply") { print(interval.duration ?? 0) }
/// ```
///
/// Damaged input never stops the program: a packet that cannot be decoded is
/// skipped and listed in ``ParsedTrace/issues``; a broken or cut-off frame
/// ends the reading, sets ``ParsedTrace/truncation``, and keeps everything
/// before it.
public enum TraceReader {
    /// Reads the trace file at `path`.
    ///
    /// - Throws: ``TraceReadError`` only when the file cannot be read at all.
    public static func read(contentsOf path: String) throws(TraceReadError) -> ParsedTrace {
        let bytes = try readFile(path)
        return read(bytes: bytes, source: path)
    }

    /// Reads a trace held in memory; `source` names it in messages.
    public static func read(bytes: [UInt8], source: String = "<memory>") -> ParsedTrace {
        read(bytes: bytes, source: source, usesFastPaths: true)
    }

    static func read(bytes: [UInt8], source: String, usesFastPaths: Bool) -> ParsedTrace {
        bytes.withUnsafeBufferPointer { buffer in
            var builder = TraceBuilder(source: source, store: RecordStore(), usesFastPaths: usesFastPaths)
            if let base = buffer.baseAddress {
                builder.store.reserve(forBytes: buffer.count)
                builder.consume(base, count: buffer.count)
            }
            var parsed = builder.finish()
            parsed.sortByTime()
            if parsed.decodedPacketCount == 0 { parsed.notATrace = notATrace(buffer, parsed: parsed, source: source) }
            return parsed
        }
    }

    /// Why `bytes`, in which no packet decoded, are not a trace.
    static func notATrace(_ bytes: UnsafeBufferPointer<UInt8>, parsed: ParsedTrace, source: String) -> TraceReadError {
        notATrace(
            prefix: Array(bytes.prefix(12)), problems: parsed.issues + (parsed.truncation.map { [$0] } ?? []),
            source: source)
    }

    /// Why a file that begins with `prefix` (at least its first 12 bytes,
    /// or all of them), in which no packet decoded, is not a trace, given
    /// the problems its reading met.
    static func notATrace(prefix: [UInt8], problems: [TraceReadError], source: String) -> TraceReadError {
        guard let first = prefix.first else {
            return TraceReadError(path: source, offset: 0, problem: "not a trace: the file is empty")
        }
        guard first == PerfettoWire.Trace.packetTag else {
            let shown = prefix.prefix(12).map { byte -> String in
                (0x20..<0x7f).contains(byte) ? String(UnicodeScalar(byte)) : "."
            }.joined()
            return TraceReadError(
                path: source, offset: 0,
                problem:
                    "not a trace: it begins with 0x\(String(first, radix: 16, uppercase: false)) (\"\(shown)\"), "
                    + "where a trace begins with a packet (0x0a)"
            )
        }
        let firstProblem = problems.min { $0.offset < $1.offset }
        return TraceReadError(
            path: source, offset: firstProblem?.offset ?? 0,
            problem: "not a trace: no packet is readable" + (firstProblem.map { ": \($0.problem)" } ?? ""))
    }

    package static func readFile(_ path: String) throws(TraceReadError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TraceReadError(
                path: path, offset: 0, problem: "cannot open: \(ErrnoText.message(errno))", errno: errno)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw TraceReadError(
                path: path, offset: 0, problem: "cannot stat: \(ErrnoText.message(errno))", errno: errno)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw TraceReadError(path: path, offset: 0, problem: "not a regular file")
        }
        let size = Int(status.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        let failure: Int32? = bytes.withUnsafeMutableBytes { raw in
            while offset < size {
                let count = readBytes(descriptor, raw.baseAddress! + offset, size - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if count == 0 { break }
                offset += count
            }
            return nil
        }
        if let failure {
            throw TraceReadError(
                path: path, offset: offset, problem: "read failed: \(ErrnoText.message(failure))", errno: failure)
        }
        if offset < size { bytes.removeLast(size - offset) }
        return bytes
    }
}

private func readBytes(_ descriptor: Int32, _ destination: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, destination, count)
}
