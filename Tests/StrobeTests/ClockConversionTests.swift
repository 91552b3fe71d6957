import Testing

@testable import Strobe

@Suite struct ClockConversionTests {
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
            let exact = start.boottime + TimestampConverter.scale(sample - start.raw, by: end.boottime - start.boottime, over: end.raw - start.raw)
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
}
