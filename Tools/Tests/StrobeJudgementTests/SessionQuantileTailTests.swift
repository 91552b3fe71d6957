import Foundation
import StrobeSimulations
import StrobeStatistics
import StrobeStatisticsTestSupport
import Testing

@testable import StrobeJudgement

/// The events beyond a percentile, which a change needs on both sides to be
/// judged: counted from the sketches, the plain count with equal weights and
/// Kish's effective count with unequal ones, carried by each estimate and
/// read by `SessionQuantiles.compare` alone.
@Suite struct SessionQuantileTailTests {
    @Test func withEqualWeightsTheEffectiveTailIsTheCountExactly() {
        var generator = SeededGenerator(seed: 71)
        let sketches = SeededSessions.logNormal(&generator, count: 57, median: 40e6)
        let weights = SessionQuantiles.weights(
            samplingProbabilities: sketches.map { _ in 0.25 }, sessions: sketches)
        let probabilities = [0.01, 0.5, 0.9, 0.99, 0.999]
        let estimates = SessionQuantiles.estimate(sessions: sketches, probabilities: probabilities)
        let sampledAlike = SessionQuantiles.estimate(
            sessions: sketches, samplingProbabilities: sketches.map { _ in 0.25 }, probabilities: probabilities)
        #expect(estimates == sampledAlike)
        for estimate in estimates {
            let (below, above) = SeededSessions.tails(sketches, beyond: estimate.estimate)
            let effective = TailEvents.effective(beyond: estimate.estimate, sessions: sketches, weights: weights)
            #expect(effective == Double(min(below, above)), "P\(estimate.probability * 100)")
            // The estimate carries that count, the one compare uses; it is
            // never short of the events the probability promises, so every
            // change the rule of `min(p, 1 − p) · events` judges is judged.
            #expect(estimate.tailEvents == Double(min(below, above)), "P\(estimate.probability * 100)")
            let promised = (min(estimate.probability, 1 - estimate.probability) * Double(estimate.events))
            #expect(Double(min(below, above)) >= promised.rounded(.down), "P\(estimate.probability * 100)")
        }
        // Uneven weights: fewer effective events than events.
        let uneven = sketches.indices.map { $0 < 3 ? 50.0 : 1 }
        let p90 = estimates[2].estimate
        #expect(
            TailEvents.effective(beyond: p90, sessions: sketches, weights: uneven)
                < Double(SeededSessions.tails(sketches, beyond: p90).above))
    }

    @Test func countBelowLeavesOutTheBucketOfTheValue() {
        var sketch = QuantileSketch()
        for value in [-5.0, -5, -1, 0, 0, 1, 2, 2, 2, 100] { sketch.add(value) }
        #expect(sketch.count(atMost: 2) == 9 && sketch.count(below: 2) == 6)
        #expect(sketch.count(below: 2.01) == 6)
        #expect(sketch.count(below: 100) == 9 && sketch.count(below: 1_000) == 10)
        #expect(sketch.count(below: 0) == 3 && sketch.count(atMost: 0) == 5)
        #expect(sketch.count(below: -1) == 2 && sketch.count(below: -5) == 0 && sketch.count(below: -50) == 0)
        #expect(QuantileSketch().count(below: 1) == 0)
    }

    /// Work that takes the same time each run puts nearly every event in
    /// one bucket: the percentiles in it are not thin tails, and a tripling
    /// is judged.
    @Test func eventsTiedWithThePercentileCountOnBothSides() throws {
        func side(_ value: Double) -> [QuantileSketch] {
            (0..<8).map { session in
                var sketch = QuantileSketch()
                for event in 0..<40 { sketch.add(event == 0 && session < 4 ? value * 1.5 : value) }
                return sketch
            }
        }
        let baseline = SessionQuantiles.estimate(sessions: side(70_600), probabilities: [0.5, 0.9])
        let candidate = SessionQuantiles.estimate(sessions: side(212_000), probabilities: [0.5, 0.9])
        for estimate in baseline + candidate {
            // 316 of the 320 events at most the percentile (in its bucket), all
            // 320 at least it; without the bucket, 4 and 0.
            #expect(estimate.tailEvents == 316, "P\(estimate.probability * 100)")
        }
        let changes = SessionQuantiles.compare(zip(baseline, candidate).map { .init(baseline: $0, candidate: $1) })
        #expect(changes.map(\.verdict) == [.regression, .regression])
    }

    /// With unequal sampling probabilities the estimate carries Kish's
    /// effective count over its own (weighted) percentile, at most the
    /// plain count.
    @Test func weightedSessionsCarryTheEffectiveCount() throws {
        var generator = SeededGenerator(seed: 75)
        let sketches = SeededSessions.logNormal(&generator, count: 40, median: 40e6)
        let probabilities = sketches.indices.map { $0 < 2 ? 0.01 : 1 }
        let weights = SessionQuantiles.weights(samplingProbabilities: probabilities, sessions: sketches)
        let estimates = SessionQuantiles.estimate(
            sessions: sketches, samplingProbabilities: probabilities, probabilities: [0.5, 0.9])
        for estimate in estimates {
            let tail = try #require(estimate.tailEvents)
            #expect(tail == TailEvents.effective(beyond: estimate.estimate, sessions: sketches, weights: weights))
            let (below, above) = SeededSessions.tails(sketches, beyond: estimate.estimate)
            #expect(tail < Double(min(below, above)), "P\(estimate.probability * 100): \(tail)")
        }
        var bootstrapGenerator = SeededGenerator(seed: 76)
        let bootstrapped = SessionQuantiles.bootstrap(
            sessions: sketches, samplingProbabilities: probabilities, probabilities: [0.5, 0.9], resamples: 20,
            generator: &bootstrapGenerator)
        #expect(bootstrapped.map(\.tailEvents) == estimates.map(\.tailEvents))
    }

    /// Two sides of 40 sessions of 30 events, two of them sampled with
    /// `heavy` and the rest with `light`; the candidate takes twice as long.
    static func doubling(seed: UInt64, heavy: Double, light: Double) -> SessionQuantiles.Comparison {
        var generator = SeededGenerator(seed: seed)
        let sides = [40e6, 80e6].map { median in
            let sketches = SeededSessions.logNormal(&generator, count: 40, median: median)
            return SessionQuantiles.estimate(
                sessions: sketches, samplingProbabilities: sketches.indices.map { $0 < 2 ? heavy : light },
                probabilities: [0.9])[0]
        }
        return .init(baseline: sides[0], candidate: sides[1])
    }

    /// `compare` alone holds a weighted side's effective tail to the rule: a
    /// doubling whose P90 tails have many events but few effective ones is
    /// inconclusive and leaves the Benjamini–Hochberg family; the same
    /// sessions sampled alike are judged.
    @Test func compareLeavesAThinWeightedTailInconclusiveAndOutOfTheFamily() throws {
        let weighted = Self.doubling(seed: 72, heavy: 0.01, light: 1)
        for side in [weighted.baseline, weighted.candidate] {
            // By the count the rule would judge it.
            #expect(0.1 * Double(side.events) >= SessionQuantiles.minimumTailEvents)
            let tail = try #require(side.tailEvents)
            #expect(tail < SessionQuantiles.minimumTailEvents, "\(tail)")
        }
        let even = Self.doubling(seed: 72, heavy: 0.5, light: 0.5)
        for side in [even.baseline, even.candidate] {
            #expect(try #require(side.tailEvents) >= SessionQuantiles.minimumTailEvents)
        }

        // Another comparison, judged in the same report.
        var generator = SeededGenerator(seed: 77)
        let other = [40e6, 60e6].map { median in
            SessionQuantiles.estimate(
                sessions: SeededSessions.logNormal(&generator, count: 40, median: median), probabilities: [0.5])[0]
        }
        let judged = SessionQuantiles.Comparison(baseline: other[0], candidate: other[1])

        let both = SessionQuantiles.compare([weighted, judged])
        #expect(both[0].verdict == .inconclusive && both[0].adjustedPValue == 1)
        #expect(both[0].pValue < 0.001, "\(both[0].pValue)")
        // In one family of two, the other change's p-value (the smaller)
        // would be doubled.
        #expect(both[1].pValue * 2 < both[0].pValue, "\(both[1].pValue)")
        // Out of the family: the other change is adjusted as if it were alone.
        #expect(both[1] == SessionQuantiles.compare([judged])[0])
        #expect(both[1].verdict == .regression)

        // Judged by the count, the same change is a regression.
        var byCount = weighted
        byCount.baseline.tailEvents = nil
        byCount.candidate.tailEvents = nil
        let counted = SessionQuantiles.compare([byCount, judged])
        #expect(counted[0].verdict == .regression)
        #expect(counted[0].shift == both[0].shift && counted[0].pValue == both[0].pValue)
        #expect(counted[1].adjustedPValue > both[1].adjustedPValue)

        // Sampled alike: judged, a regression.
        #expect(SessionQuantiles.compare([even, judged]).map(\.verdict) == [.regression, .regression])
    }

    /// The tail is counted from the sketches, not estimated from the
    /// percentile's probability: a side whose count falls short of 10 is not
    /// judged even where `min(p, 1 − p) · events` reaches it, and the
    /// reverse.
    @Test func compareReadsTheCountedTailBeforeTheProbability() {
        func estimate(_ value: Double, tail: Double?) -> SessionQuantileEstimate {
            SessionQuantileEstimate(
                probability: 0.99, estimate: value, lower: value * exp(-1.96 * 0.02), upper: value * exp(1.96 * 0.02),
                confidence: 0.95, logStandardError: 0.02, sessions: 40, events: 1_000, tailEvents: tail)
        }
        let changes = SessionQuantiles.compare([
            .init(baseline: estimate(100, tail: nil), candidate: estimate(150, tail: nil)),
            .init(baseline: estimate(100, tail: 9), candidate: estimate(150, tail: 12)),
            .init(baseline: estimate(100, tail: 10), candidate: estimate(150, tail: 10)),
        ])
        #expect(changes.map(\.verdict) == [.regression, .inconclusive, .regression])
        let thin = SessionQuantiles.compare([
            .init(
                baseline: SessionQuantileEstimate(
                    probability: 0.99, estimate: 100, lower: 90, upper: 110, confidence: 0.95, logStandardError: 0.02,
                    sessions: 40, events: 500, tailEvents: 20),
                candidate: SessionQuantileEstimate(
                    probability: 0.99, estimate: 150, lower: 140, upper: 160, confidence: 0.95, logStandardError: 0.02,
                    sessions: 40, events: 500, tailEvents: 20))
        ])
        // 0.01 · 500 = 5 events by the probability, 20 counted: judged.
        #expect(thin[0].verdict == .regression)
    }

    /// An estimate written before the tail was recorded reads with none,
    /// and `compare` falls back to `min(p, 1 − p) · events` for it.
    @Test func anEstimateWithoutTheTailDecodesAndIsJudgedByItsEvents() throws {
        var generator = SeededGenerator(seed: 78)
        let estimate = SessionQuantiles.estimate(
            sessions: SeededSessions.logNormal(&generator, count: 20, median: 40e6), probabilities: [0.9])[0]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(estimate), as: UTF8.self)
        #expect(json.contains(#""tailEvents":"#))
        let older = json.replacing(#/,?"tailEvents":[0-9.e+-]+/#, with: "")
        #expect(!older.contains("tailEvents") && older != json)
        let decoded = try JSONDecoder().decode(SessionQuantileEstimate.self, from: Data(older.utf8))
        #expect(decoded.tailEvents == nil)
        var expected = estimate
        expected.tailEvents = nil
        #expect(decoded == expected)
        #expect(try JSONDecoder().decode(SessionQuantileEstimate.self, from: Data(json.utf8)) == estimate)
        #expect(!String(decoding: try encoder.encode(decoded), as: UTF8.self).contains("tailEvents"))
    }
}
