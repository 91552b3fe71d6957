import CProtobufC
import CStrobe
import Foundation
import Strobe
import StrobeProtos
import StrobeReader
import StrobeTestSupport

/// Reader speed: events per second read from an in-memory trace, against
/// unpacking the same packets one by one with protobuf-c's generic decoder.
enum ReaderBenchmarks {
    static func run() {
        let path = CoreBenchmarks.temporaryPath("reader")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pairs = Int(ProcessInfo.processInfo.environment["STROBE_BENCH_READER_PAIRS"] ?? "") ?? 1_000_000
        let session = try! TraceSession.start(CoreBenchmarks.quietConfiguration(path: path))
        for _ in 0..<pairs {
            Trace.begin("reader interval")
            Trace.end()
        }
        try! session.stop()
        let bytes = try! [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let events = Double(pairs * 2)

        var best = 0.0
        var bestVisit = 0.0
        var intervals = 0
        for _ in 0..<3 {
            let start = cstrobe_monotonic_ns()
            let trace = TraceReader.read(bytes: bytes, source: path)
            let seconds = Double(cstrobe_monotonic_ns() - start) / 1e9
            intervals = trace.intervals.count
            best = max(best, events / seconds)
            // Intervals are built when accessed: check that samples carry
            // everything a reader needs.
            for position in [0, intervals / 2, intervals - 1] where position >= 0 {
                let interval = trace.intervals[position]
                precondition(
                    interval.name == "reader interval" && interval.duration != nil && interval.depth == 0
                        && interval.tid != nil && interval.start > 0,
                    "the reader must produce complete intervals")
            }
            // Then the cost of building every one of them, apart.
            let visitStart = cstrobe_monotonic_ns()
            var total: UInt64 = 0
            var named = 0
            for interval in trace.intervals {
                total &+= interval.duration ?? 0
                if !interval.name.isEmpty { named += 1 }
            }
            let visitSeconds = Double(cstrobe_monotonic_ns() - visitStart) / 1e9
            precondition(named == intervals && total > 0, "every interval must be complete")
            bestVisit = max(bestVisit, Double(intervals) / visitSeconds)
        }
        precondition(intervals == pairs, "the reader must see every interval")
        Figure(
            name: "reader throughput", value: best / 1e6, unit: "M events/s",
            baselineName: "protobuf-c unpack of the same packets", baselineValue: unpackRate(bytes) / 1e6,
            target: "value >= 30", extra: ["intervals_visited_m_per_s": bestVisit / 1e6]
        ).printLine()
        interleavedThreads(pairs: pairs, oneThreadRate: best)
    }

    /// The same number of events from two threads at once, each written as a
    /// block at the stop, so the reader must put them in time order, against
    /// the one-thread trace read above.
    static func interleavedThreads(pairs: Int, oneThreadRate: Double) {
        let path = CoreBenchmarks.temporaryPath("reader-2")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try! TraceSession.start(CoreBenchmarks.quietConfiguration(path: path))
        let threads = (0..<2).map { _ in
            Thread {
                for _ in 0..<pairs / 2 {
                    Trace.begin("reader interval")
                    Trace.end()
                }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { usleep(1000) }
        try! session.stop()
        let bytes = try! [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var best = 0.0
        for _ in 0..<3 {
            let start = cstrobe_monotonic_ns()
            let trace = TraceReader.read(bytes: bytes, source: path)
            let seconds = Double(cstrobe_monotonic_ns() - start) / 1e9
            precondition(trace.intervals.count == pairs / 2 * 2, "the reader must see every interval")
            best = max(best, Double(pairs / 2 * 4) / seconds)
        }
        Figure(
            name: "reader throughput, 2 threads at once", value: best / 1e6, unit: "M events/s",
            baselineName: "reader throughput, 1 thread", baselineValue: oneThreadRate / 1e6,
            target: "ratio >= 0.7"
        ).printLine()
    }

    /// Packets per second protobuf-c unpacks (and frees) from `bytes`.
    static func unpackRate(_ bytes: [UInt8]) -> Double {
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            var best = 0.0
            for _ in 0..<3 {
                var offset = 0
                var packets = 0
                let start = cstrobe_monotonic_ns()
                while offset < buffer.count {
                    offset += 1
                    var length = 0
                    var shift = 0
                    while true {
                        let byte = base[offset]
                        offset += 1
                        length |= Int(byte & 0x7F) << shift
                        if byte & 0x80 == 0 { break }
                        shift += 7
                    }
                    if let packet = perfetto__protos__trace_packet__unpack(nil, length, base + offset) {
                        perfetto__protos__trace_packet__free_unpacked(packet, nil)
                    }
                    offset += length
                    packets += 1
                }
                let seconds = Double(cstrobe_monotonic_ns() - start) / 1e9
                best = max(best, Double(packets) / seconds)
            }
            return best
        }
    }
}
