import StrobeTestTraits
import Testing

@testable import Strobe
@testable import StrobeEncoding

@Suite(.processWide) struct ClockConversionTests {
    /// The fixed-point conversion matches exact 128-bit arithmetic to within
    /// a nanosecond, is monotonic, and is continuous across readings.
    @Test func fixedPointConversionIsExactToTheNanosecond() {
        // A 2.9 GHz TSC against BOOTTIME, read every 100 ms with jitter.
        var points: [ClockCalibration.Point] = []
        var raw: UInt64 = 0
        var boot: UInt64 = 5_000_000_000_000
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            points.append(.init(raw: raw, boottime: boot))
            raw += 290_000_000 + UInt64.random(in: 0..<1000, using: &generator)
            boot += 100_000_000 + UInt64.random(in: 0..<20, using: &generator)
        }
        var converter = TimestampConverter(points: points)
        var previous: UInt64 = 0
        var sample: UInt64 = 0
        while sample < raw {
            let converted = converter.boottime(raw: sample)
            let segment = points.lastIndex { $0.raw <= sample } ?? 0
            let start = points[min(segment, points.count - 2)]
            let end = points[min(segment, points.count - 2) + 1]
            let exact =
                start.boottime
                + TimestampConverter.scale(
                    sample - start.raw, by: end.boottime - start.boottime, over: end.raw - start.raw)
            #expect(converted >= exact - 1 && converted <= exact + 1)
            #expect(converted >= previous)
            previous = converted
            sample += 1_234_567
        }
        // The readings themselves map exactly.
        var fresh = TimestampConverter(points: points)
        for point in points.dropLast() {
            #expect(fresh.boottime(raw: point.raw) == point.boottime)
        }
    }

    /// A wall-clock instant in a record is placed with the wall clock's
    /// offset at the readings around it: an instant a millisecond before
    /// the record leads it by a millisecond, one within a microsecond is
    /// the record's own time, and in a segment where the wall clock was set
    /// (its offset moved between the readings) no instant is trusted.
    @Test func wallClockInstantsArePlacedWithTheOffsetOfTheirSegment() {
        let offset: UInt64 = 1_700_000_000_000_000_000
        let points: [ClockCalibration.Point] = [
            .init(raw: 0, boottime: 1_000_000_000, realtimeOffset: offset),
            .init(raw: 1_000_000_000, boottime: 2_000_000_000, realtimeOffset: offset + 3),
            // The wall clock was set forward by an hour in this segment.
            .init(raw: 2_000_000_000, boottime: 3_000_000_000, realtimeOffset: offset + 3_600_000_000_000),
        ]
        var converter = TimestampConverter(points: points)
        let boottime = converter.boottime(raw: 500_000_000)
        #expect(boottime == 1_500_000_000)
        let wallClockNow = boottime + offset + 3
        let flag = RecordLayout.wallClockInstant
        #expect(converter.lead(of: flag | (wallClockNow - 1_000_000), at: boottime) == 1_000_000)
        #expect(converter.lead(of: flag | (wallClockNow - 500), at: boottime) == 0)
        #expect(converter.lead(of: flag | (wallClockNow + 5_000), at: boottime) == 0)
        // A plain word is how long before, as it is.
        #expect(converter.lead(of: 42, at: boottime) == 42)
        let stepped = converter.boottime(raw: 1_500_000_000)
        #expect(converter.lead(of: flag | (stepped + offset - 1_000_000), at: stepped) == 0)
        // Points with no offset (a crash file's) place no instant.
        var unknown = TimestampConverter(points: [.init(raw: 0, boottime: 1_000_000_000)])
        let early = unknown.boottime(raw: 10)
        #expect(unknown.lead(of: flag | 1, at: early) == 0)
    }
}
