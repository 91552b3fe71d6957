import Foundation
import Strobe

/// Traces written by the SDK, in this process, one session at a time.
enum SDKTraces {
    /// The recording lock: one session per process at a time.
    static let lock = NSLock()

    /// Records `intervals` intervals named `work` (each spinning about
    /// `spin` iterations) and `samples` samples of the counter `queue`,
    /// under `metadata`, into `path`.
    static func write(
        _ path: String, metadata: TraceMetadata, intervals: Int = 50, spin: Int = 200, samples: Int = 5
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.metadata = metadata
        try TraceSession.record(configuration) {
            var sink = 0
            for _ in 0..<intervals {
                Trace.interval("work") {
                    for index in 0..<spin { sink &+= index &* index }
                }
            }
            for index in 0..<samples { Trace.counter("queue", Int64(index)) }
            withExtendedLifetime(sink) {}
        }
    }

    /// The offsets of the top-level packets of a trace: (start of the
    /// field, start of the payload, end).
    static func packets(_ bytes: [UInt8]) -> [(field: Int, payload: Int, end: Int)] {
        var result: [(Int, Int, Int)] = []
        var offset = 0
        while offset < bytes.count {
            let field = offset
            offset += 1 // the tag 0x0a
            var length = 0
            var shift = 0
            while bytes[offset] & 0x80 != 0 {
                length |= Int(bytes[offset] & 0x7f) << shift
                shift += 7
                offset += 1
            }
            length |= Int(bytes[offset]) << shift
            offset += 1
            result.append((field, offset, offset + length))
            offset += length
        }
        return result
    }
}
