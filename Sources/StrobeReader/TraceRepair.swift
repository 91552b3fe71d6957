import PerfettoWire
import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Cuts a trace back to its last complete packet.
///
/// A process killed while it appends to its trace can leave the last packet
/// cut short: the kernel may stop a large `write` between pages. Strobe's
/// reader stops at such a packet and keeps what came before, but a reader
/// that parses the whole file as one `Trace` message (Perfetto's Python
/// schema, `protoc --decode`) rejects the file. Repairing it drops the cut
/// packet, so that every reader accepts what remains.
///
/// ```swift
/// let outcome = try TraceRepair.repair(file: "killed.pftrace")
/// print("dropped \(outcome.droppedBytes) bytes")
/// ```
public enum TraceRepair {
    /// Where a trace's complete packets end.
    public struct Outcome: Sendable, Hashable {
        /// Bytes from the start that hold only complete top-level fields.
        public var keptBytes: Int
        /// Complete packets in the kept bytes.
        public var packets: Int
        /// Bytes after the kept ones; 0 when the trace was whole.
        public var droppedBytes: Int
        /// Why the bytes after the kept ones were dropped; nil when none were.
        public var problem: TraceReadError?
    }

    /// Finds the end of the complete packets in `bytes`; `source` names the
    /// input in ``Outcome/problem``.
    public static func scan(_ bytes: [UInt8], source: String = "<memory>") -> Outcome {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                return Outcome(keptBytes: 0, packets: 0, droppedBytes: 0, problem: nil)
            }
            var reader = WireReader(base, from: 0, to: buffer.count)
            let packetTag = UInt64(PerfettoWire.Trace.packetTag)
            var kept = 0
            var packets = 0
            var problem: String?
            while !reader.isAtEnd {
                guard let key = reader.varint() else {
                    problem = "cut off inside a field tag"
                    break
                }
                let field = PerfettoWire.WireType.field(of: key)
                let wireType = PerfettoWire.WireType.wireType(of: key)
                guard field != 0, wireType != 3, wireType != 4, wireType <= 5 else {
                    problem = "not a field of a trace (tag 0x\(String(key, radix: 16)))"
                    break
                }
                guard reader.skip(wireType: wireType) else {
                    problem = key == packetTag ? "packet cut off" : "field \(field) cut off"
                    break
                }
                if key == packetTag { packets += 1 }
                kept = reader.position
            }
            let failure = problem.map { TraceReadError(path: source, offset: kept, problem: $0) }
            return Outcome(keptBytes: kept, packets: packets, droppedBytes: buffer.count - kept, problem: failure)
        }
    }

    /// Cuts the trace file at `path` back to its last complete packet, in
    /// place or, with `output`, into a new file (the input is left as it
    /// is). A whole trace is left untouched (or copied whole).
    ///
    /// - Throws: ``TraceReadError`` naming the file when it cannot be read
    ///   or written, or when it does not begin with a trace packet (it is
    ///   not a trace, and cutting it would only destroy it).
    public static func repair(file path: String, writingTo output: String? = nil) throws(TraceReadError) -> Outcome {
        let bytes = try TraceReader.readFile(path)
        let outcome = scan(bytes, source: path)
        if outcome.packets == 0 {
            guard let first = bytes.first else {
                throw TraceReadError(path: path, offset: 0, problem: "not a trace: the file is empty")
            }
            guard first == PerfettoWire.Trace.packetTag else {
                throw TraceReadError(
                    path: path, offset: 0,
                    problem: "not a trace: it begins with 0x\(String(first, radix: 16)), not a packet, and holds none")
            }
            let reason = outcome.problem.map { ": \($0.problem)" } ?? ""
            throw TraceReadError(
                path: path, offset: outcome.problem?.offset ?? 0,
                problem:
                    "no packet of the trace is whole\(reason); there is nothing to keep, so the file is left as it is")
        }
        if let output {
            try store(bytes[0..<outcome.keptBytes], to: output)
        } else if outcome.droppedBytes > 0 {
            guard truncate(path, off_t(outcome.keptBytes)) == 0 else {
                throw TraceReadError(
                    path: path, offset: outcome.keptBytes, problem: "cannot cut the file: \(ErrnoText.message(errno))",
                    errno: errno)
            }
        }
        return outcome
    }

    private static func store(_ bytes: ArraySlice<UInt8>, to path: String) throws(TraceReadError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw TraceReadError(
                path: path, offset: 0, problem: "cannot create: \(ErrnoText.message(errno))", errno: errno)
        }
        defer { close(descriptor) }
        let outcome = DescriptorWriting.writeAll(bytes, to: descriptor)
        if let failure = outcome.failure {
            throw TraceReadError(
                path: path, offset: outcome.written, problem: "write failed: \(ErrnoText.message(failure))",
                errno: failure)
        }
    }
}
