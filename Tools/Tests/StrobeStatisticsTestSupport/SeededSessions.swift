import Foundation
import StrobeStatistics

/// Sessions and tail counts for the tests of percentiles over sessions
/// (the statistics' and the fleet's), drawn from a seeded source.
package enum SeededSessions {
    /// `count` sessions of 30 events each, log-normal (σ 0.5) around
    /// `median`, every session alike.
    package static func logNormal(_ generator: inout SeededGenerator, count: Int, median: Double) -> [QuantileSketch] {
        (0..<count).map { _ in
            var sketch = QuantileSketch()
            for _ in 0..<30 { sketch.add(median * exp(0.5 * generator.normal())) }
            return sketch
        }
    }

    /// The events of `sessions` at most `value` and at least it, the bucket
    /// of `value` on both sides, as `SessionQuantileEstimate.tailEvents`
    /// counts them.
    package static func tails(_ sessions: [QuantileSketch], beyond value: Double) -> (below: UInt64, above: UInt64) {
        let atMost = sessions.reduce(0) { $0 + $1.count(atMost: value) }
        let under = sessions.reduce(0) { $0 + $1.count(below: value) }
        return (atMost, sessions.reduce(0) { $0 + $1.count } - under)
    }
}
