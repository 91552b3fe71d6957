import Foundation
import StrobeDiff
import StrobeStatistics
import Testing

/// The sketch's quantiles stay within its relative accuracy of the exact
/// order statistic, merging is exact, and its bytes round-trip or are
/// refused with the offset of the damage.
@Suite struct QuantileSketchTests {
    static func sample(_ count: Int, seed: UInt64, scale: Double = 1) -> [Double] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in scale * exp(14 + 0.8 * generator.normal()) }
    }

    /// The order statistic of rank floor(q·(n − 1)), which the sketch's
    /// guarantee is about.
    static func orderStatistic(_ sorted: [Double], _ q: Double) -> Double {
        sorted[Int((q * Double(sorted.count - 1)).rounded(.down))]
    }

    @Test(arguments: [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1])
    func quantilesAreWithinTheAccuracy(q: Double) {
        let values = Self.sample(50_000, seed: 7)
        var sketch = QuantileSketch()
        for value in values { sketch.add(value) }
        let exact = Self.orderStatistic(values.sorted(), q)
        let relative = abs(sketch.quantile(q) - exact) / exact
        #expect(relative <= sketch.relativeAccuracy + 1e-12, "q \(q): \(sketch.quantile(q)) against \(exact)")
        #expect(sketch.count == 50_000)
        #expect(sketch.minimum == values.min() && sketch.maximum == values.max())
    }

    @Test func interpolatedQuantilesStayInTheirBucketAndMoveSmoothly() {
        let values = Self.sample(20_000, seed: 9)
        var sketch = QuantileSketch()
        for value in values { sketch.add(value) }
        let sorted = values.sorted()
        var previous = 0.0
        for step in 1..<1000 {
            let q = Double(step) / 1000
            let value = sketch.interpolatedQuantile(q)
            let exact = Self.orderStatistic(sorted, q)
            #expect(abs(value - exact) / exact <= 2 * sketch.relativeAccuracy + 1e-9, "q \(q)")
            #expect(value >= previous, "q \(q): not monotone")
            previous = value
        }
        #expect(sketch.interpolatedQuantile(0) == sketch.minimum)
        #expect(QuantileSketch().interpolatedQuantile(0.5).isNaN)
    }

    @Test func mergingEqualsAddingEverythingToOneSketch() {
        var pooled = QuantileSketch()
        var merged = QuantileSketch()
        for part in 0..<20 {
            var sketch = QuantileSketch()
            for value in Self.sample(1_000, seed: UInt64(part), scale: Double(part + 1)) {
                sketch.add(value)
                pooled.add(value)
            }
            merged.merge(sketch)
        }
        for q in [0.1, 0.5, 0.9, 0.99] { #expect(merged.quantile(q) == pooled.quantile(q)) }
        #expect(merged.count == pooled.count)
        #expect(abs(merged.sum - pooled.sum) / pooled.sum < 1e-12)
    }

    @Test func negativeAndZeroValuesKeepTheirOrder() {
        var sketch = QuantileSketch()
        let values: [Double] = [-1000, -10, -10, 0, 0, 0, 5, 50, 500, 5000]
        for value in values { sketch.add(value) }
        for (rank, value) in values.enumerated() {
            let estimate = sketch.quantile(Double(rank) / Double(values.count - 1))
            #expect(abs(estimate - value) <= abs(value) * sketch.relativeAccuracy + 1e-12, "rank \(rank)")
        }
        #expect(QuantileSketch().quantile(0.5).isNaN)
    }

    @Test func bytesRoundTrip() throws {
        var sketch = QuantileSketch()
        for value in Self.sample(10_000, seed: 3) + [-4, 0] { sketch.add(value) }
        let bytes = sketch.serialized()
        let back = try QuantileSketch(serialized: bytes)
        #expect(back == sketch)
        #expect(back.serialized() == bytes)
        #expect(bytes.count < 1_000)
    }

    @Test func damagedBytesAreRefusedWithTheirOffset() {
        var sketch = QuantileSketch()
        for value in Self.sample(2_000, seed: 5) { sketch.add(value) }
        let bytes = sketch.serialized()
        for length in 0..<bytes.count {
            #expect(throws: QuantileSketchError.self) { try QuantileSketch(serialized: bytes.prefix(length)) }
        }
        var wrongVersion = bytes
        wrongVersion[0] = 9
        #expect { try QuantileSketch(serialized: wrongVersion) } throws: {
            "\($0)".contains("byte 0: format version 9")
        }
        var flipped = bytes
        flipped[45] ^= 0x01 // the count no longer adds up, or a bucket moves
        #expect(throws: QuantileSketchError.self) { try QuantileSketch(serialized: flipped) }
        #expect { try QuantileSketch(serialized: bytes + [0]) } throws: { "\($0)".contains("1 bytes after the sketch") }
    }
}
