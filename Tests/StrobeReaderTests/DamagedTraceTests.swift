import Foundation
import Strobe
import StrobeReader
import StrobeTestTraits
import Testing

/// Cut, flipped, missing and foreign bytes: read without crashing, with
/// an error that names the file and offset.
@Suite(.serialized, .processWide)
struct DamagedTraceTests {
    @Test func everyPrefixReadsWithoutCrashingAndKeepsAPrefix() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ReaderTests.recordVariedTrace(path)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let full = TraceReader.read(bytes: bytes, source: "full")
        var previousIntervals = 0
        for length in 0...bytes.count {
            let trace = TraceReader.read(bytes: Array(bytes[0..<length]), source: "prefix")
            if let truncation = trace.truncation {
                #expect(truncation.offset >= 0 && truncation.offset <= length)
                #expect(truncation.path == "prefix")
            }
            #expect(trace.packetCount <= full.packetCount)
            // Intervals only ever appear as the prefix grows.
            #expect(trace.intervals.count >= previousIntervals - 1)
            previousIntervals = trace.intervals.count
        }
        #expect(previousIntervals == full.intervals.count)
    }

    @Test func randomByteFlipsNeverCrash() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ReaderTests.recordVariedTrace(path)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<2000 {
            var damaged = bytes
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let index = Int(generator.next() % UInt64(damaged.count))
                damaged[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            }
            let trace = TraceReader.read(bytes: damaged, source: "flipped")
            for issue in trace.issues + (trace.truncation.map { [$0] } ?? []) {
                #expect(issue.offset >= 0 && issue.offset <= damaged.count)
            }
            _ = TraceSummary(trace: trace, frameBudget: 16_670_000)
        }
    }

    @Test func missingFileNamesTheFile() {
        #expect(throws: TraceReadError.self) { try TraceReader.read(contentsOf: "/nonexistent/trace.pftrace") }
        do {
            _ = try TraceReader.read(contentsOf: "/nonexistent/trace.pftrace")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/trace.pftrace: cannot open: "))
        }
    }

    @Test func garbageStopsWithAnOffset() {
        let trace = TraceReader.read(bytes: [0x0A, 0x02, 0x40, 0x01, 0xFF, 0xFF], source: "garbage")
        #expect(trace.packetCount == 1)
        #expect(trace.truncation?.offset == 4)
        #expect(trace.truncation?.description.hasPrefix("garbage: byte 4:") == true)
    }
}

/// A small seeded generator for repeatable damage.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
