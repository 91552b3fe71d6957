import Foundation
import StrobeStatistics

extension SessionQuantiles {
    /// The percentiles of ``estimate(sessions:samplingProbabilities:probabilities:confidence:)``
    /// with percentile-bootstrap intervals over sessions, a check of
    /// Woodruff's intervals: `resamples` times, `m` sessions are drawn with
    /// replacement from the `m` (seeded by `generator`), merged with their
    /// weights, and the percentile read inside its bucket; the interval is
    /// the `(1 ± confidence)/2` quantiles of those readings.
    ///
    /// It costs `resamples` merges of every session where Woodruff's costs
    /// one, which is why it is not the default; `make bench fleet` compares
    /// the two on the same data.
    package static func bootstrap(
        sessions: [QuantileSketch], samplingProbabilities: [Double]? = nil, probabilities: [Double],
        confidence: Double = 0.95, resamples: Int = 1_000, generator: inout SeededGenerator
    ) -> [SessionQuantileEstimate] {
        let weights = Self.weights(samplingProbabilities: samplingProbabilities, sessions: sessions)
        let pooled = merge(sessions, weights: weights)
        let m = sessions.count
        var readings = [[Double]](repeating: [], count: probabilities.count)
        if m >= 2, !pooled.isEmpty {
            var multiplicity = [Int](repeating: 0, count: m)
            for _ in 0..<max(resamples, 0) {
                for index in multiplicity.indices { multiplicity[index] = 0 }
                for _ in 0..<m { multiplicity[Int(generator.next() % UInt64(m))] += 1 }
                var resample = pooled.emptied()
                for (index, times) in multiplicity.enumerated() where times > 0 {
                    resample.merge(sessions[index], weight: Double(times) * weights[index])
                }
                guard !resample.isEmpty else { continue }
                for (slot, p) in probabilities.enumerated() { readings[slot].append(resample.interpolatedQuantile(p)) }
            }
        }
        let z = NormalDistribution.quantile(1 - (1 - confidence) / 2)
        let events = sessions.reduce(0) { $0 + $1.count }
        return probabilities.enumerated().map { slot, p in
            let estimate = pooled.quantile(p)
            var lower = estimate
            var upper = estimate
            let sorted = readings[slot].sorted()
            if sorted.count >= 2 {
                lower = Quantiles.quantile(sorted: sorted, (1 - confidence) / 2)
                upper = Quantiles.quantile(sorted: sorted, (1 + confidence) / 2)
            }
            return SessionQuantileEstimate(
                probability: p, estimate: estimate, lower: lower, upper: upper, confidence: confidence,
                logStandardError: logStandardError(lower, upper, z: z), sessions: m, events: events,
                tailEvents: TailEvents.effective(beyond: estimate, sessions: sessions, weights: weights))
        }
    }
}
