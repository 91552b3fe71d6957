import Foundation
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe

/// A trace records where CLOCK_BOOTTIME sits in Unix time: each sequence's
/// clock snapshot holds BUILTIN_CLOCK_REALTIME beside BOOTTIME, which
/// Perfetto's official schema reads and StrobeReader gives as
/// `realtimeOffset`.
@Suite(.serialized, .processWide)
struct RealtimeClockTests {
    /// CLOCK_REALTIME less CLOCK_BOOTTIME now, in nanoseconds.
    static func offsetNow() -> Int64 {
        var boot = timespec()
        var real = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_REALTIME, &real)
        return (Int64(real.tv_sec) - Int64(boot.tv_sec)) * 1_000_000_000 + Int64(real.tv_nsec) - Int64(boot.tv_nsec)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func theSnapshotsPlaceTheTraceInUnixTime() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let before = Self.offsetNow()
        try TraceSession.record(configuration) {
            for _ in 0..<10 { Trace.interval("work") {} }
            let thread = Thread { Trace.interval("other thread") {} }
            thread.start()
            while !thread.isFinished { usleep(1_000) }
        }
        let after = Self.offsetNow()

        let official = try OfficialDecoder.decode(path)
        #expect(official.errors.isEmpty)
        // One snapshot per sequence that recorded events, each with the
        // wall clock; a wall clock set during the test would move it.
        #expect(official.realtimeOffsets.count >= 2)
        let trace = try TraceReader.read(contentsOf: path)
        let offset = try #require(trace.realtimeOffset)
        #expect(official.realtimeOffsets.contains(Int64(offset)))
        let tolerance: Int64 = 5_000_000
        #expect(Int64(offset) >= min(before, after) - tolerance && Int64(offset) <= max(before, after) + tolerance)
        // The intervals read on BOOTTIME as before: the added clock moves
        // no event.
        #expect(official.slices(named: "work").map(\.ts) == trace.intervals(named: "work").map(\.start))
    }
}
