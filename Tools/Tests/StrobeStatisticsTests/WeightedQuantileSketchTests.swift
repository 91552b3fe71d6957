import Foundation
import StrobeSimulations
import StrobeStatistics
import Testing

/// Sketches merged with weights answer as plain merges when every weight is
/// 1, as repeated merges for whole weights, and session percentiles with
/// equal sampling probabilities are exactly the unweighted ones; the
/// bootstrap over sessions is seeded and agrees with Woodruff's interval.
@Suite struct WeightedQuantileSketchTests {
    /// Sessions of log-normal values around their own speed, with a few
    /// negative values and zeros so that every store is exercised.
    static func sessions(_ count: Int, seed: UInt64, signed: Bool = false) -> [QuantileSketch] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in
            var sketch = QuantileSketch()
            let speed = 40e6 * exp(0.3 * generator.normal())
            for _ in 0..<(20 + Int(generator.next() % 41)) {
                var value = speed * exp(0.5 * generator.normal())
                if signed, generator.next() % 10 == 0 { value = -value }
                if signed, generator.next() % 25 == 0 { value = 0 }
                sketch.add(value)
            }
            return sketch
        }
    }

    static let probabilities = [0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999, 1]

    @Test func weightOneAnswersExactlyAsThePlainMerge() {
        let sessions = Self.sessions(300, seed: 11, signed: true)
        var plain = QuantileSketch()
        var weighted = WeightedQuantileSketch()
        for session in sessions {
            plain.merge(session)
            weighted.merge(session)
        }
        #expect(weighted.totalWeight == Double(plain.count))
        #expect(weighted.minimum == plain.minimum && weighted.maximum == plain.maximum)
        for q in Self.probabilities {
            #expect(weighted.quantile(q) == plain.quantile(q), "q \(q)")
            #expect(weighted.interpolatedQuantile(q) == plain.interpolatedQuantile(q), "q \(q)")
            let value = plain.quantile(q)
            #expect(weighted.weight(atMost: value) == Double(plain.count(atMost: value)), "q \(q)")
        }
        #expect(weighted.weight(atMost: -1e12) == Double(plain.count(atMost: -1e12)))
        #expect(weighted.weight(atMost: 0) == Double(plain.count(atMost: 0)))
    }

    @Test func aWholeWeightCountsTheSketchThatManyTimes() {
        let sessions = Self.sessions(50, seed: 12)
        var repeated = QuantileSketch()
        var weighted = WeightedQuantileSketch()
        for (index, session) in sessions.enumerated() {
            let times = index % 4
            for _ in 0..<times { repeated.merge(session) }
            weighted.merge(session, weight: Double(times))
        }
        #expect(weighted.totalWeight == Double(repeated.count))
        for q in Self.probabilities {
            #expect(weighted.quantile(q) == repeated.quantile(q), "q \(q)")
            #expect(weighted.interpolatedQuantile(q) == repeated.interpolatedQuantile(q), "q \(q)")
        }
    }

    @Test func heavierSessionsPullThePercentilesTowardThem() {
        var fast = QuantileSketch()
        var slow = QuantileSketch()
        for index in 1...100 {
            fast.add(Double(index))
            slow.add(Double(index) + 1_000)
        }
        var even = WeightedQuantileSketch()
        even.merge(fast)
        even.merge(slow)
        var tilted = WeightedQuantileSketch()
        tilted.merge(fast, weight: 9)
        tilted.merge(slow)
        #expect(even.quantile(0.5) > 90 && even.quantile(0.6) > 1_000)
        #expect(tilted.quantile(0.6) < 100 && tilted.quantile(0.95) > 1_000)
        #expect(abs(tilted.weight(atMost: 100.4) / tilted.totalWeight - 0.9) < 1e-12)
        var empty = WeightedQuantileSketch()
        empty.merge(fast, weight: 0)
        #expect(empty.isEmpty && empty.quantile(0.5).isNaN && empty.weight(atMost: 50) == 0)
    }

    /// Equal sampling probabilities, whatever their value, give exactly the
    /// unweighted percentiles and intervals: Woodruff's, computed here
    /// from the plain merge.
    @Test(arguments: [1.0, 0.5, 0.01])
    func equalProbabilitiesGiveExactlyTheUnweightedResult(probability: Double) {
        let sessions = Self.sessions(200, seed: 13)
        let ps = [0.5, 0.9, 0.99]
        let unweighted = SessionQuantiles.estimate(sessions: sessions, probabilities: ps)
        let equal = SessionQuantiles.estimate(
            sessions: sessions, samplingProbabilities: Array(repeating: probability, count: sessions.count),
            probabilities: ps)
        #expect(equal == unweighted)

        var pooled = QuantileSketch()
        for session in sessions { pooled.merge(session) }
        let z = NormalDistribution.quantile(0.975)
        for (estimate, p) in zip(unweighted, ps) {
            let q = pooled.quantile(p)
            let total = Double(pooled.count)
            let share = Double(pooled.count(atMost: q)) / total
            var sumSquares = 0.0
            for session in sessions {
                let residual = Double(session.count(atMost: q)) - share * Double(session.count)
                sumSquares += residual * residual
            }
            let se = (Double(sessions.count) / Double(sessions.count - 1) * sumSquares).squareRoot() / total
            #expect(estimate.estimate == q)
            #expect(estimate.lower == min(q, pooled.interpolatedQuantile(max(0, p - z * se))))
            #expect(estimate.upper == max(q, pooled.interpolatedQuantile(min(1, p + z * se))))
            #expect(estimate.events == pooled.count && estimate.sessions == 200)
        }
    }

    @Test func weightsAreInverseProbabilitiesScaledToTheEvents() {
        let sessions = Self.sessions(4, seed: 14)
        let weights = SessionQuantiles.weights(samplingProbabilities: [0.1, 1, 0.5, 1], sessions: sessions)
        #expect(abs(weights[0] / weights[1] - 10) < 1e-12 && abs(weights[2] / weights[3] - 2) < 1e-12)
        let events = sessions.reduce(0.0) { $0 + Double($1.count) }
        let weighted = zip(sessions, weights).reduce(0.0) { $0 + Double($1.0.count) * $1.1 }
        #expect(abs(weighted - events) < 1e-9)
        #expect(SessionQuantiles.weights(samplingProbabilities: nil, sessions: sessions) == [1, 1, 1, 1])
    }

    @Test func theBootstrapOverSessionsIsSeededAndAgreesWithWoodruff() {
        let sessions = Self.sessions(500, seed: 15)
        let ps = [0.5, 0.9, 0.99]
        var first = SeededGenerator(seed: 1)
        var second = SeededGenerator(seed: 1)
        let a = SessionQuantiles.bootstrap(sessions: sessions, probabilities: ps, resamples: 200, generator: &first)
        let b = SessionQuantiles.bootstrap(sessions: sessions, probabilities: ps, resamples: 200, generator: &second)
        #expect(a == b)
        let woodruff = SessionQuantiles.estimate(sessions: sessions, probabilities: ps)
        for (bootstrap, interval) in zip(a, woodruff) {
            #expect(bootstrap.estimate == interval.estimate)
            #expect(bootstrap.lower < bootstrap.estimate * 1.01 && bootstrap.upper > bootstrap.estimate * 0.99)
            let ratio = bootstrap.logStandardError / interval.logStandardError
            #expect(ratio > 0.7 && ratio < 1.4, "P\(Int(bootstrap.probability * 100)): \(ratio)")
        }
        var generator = SeededGenerator(seed: 2)
        let single = SessionQuantiles.bootstrap(
            sessions: [sessions[0]], probabilities: [0.5], resamples: 50, generator: &generator)
        #expect(single[0].lower == single[0].estimate && single[0].upper == single[0].estimate)
    }
}
