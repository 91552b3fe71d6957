import Foundation
import StrobeDiff
import StrobeStatistics

/// A simulated fleet, to measure the fleet report's intervals and verdicts:
/// sessions with a speed of their own (log-normal around 1) whose events
/// are log-normal around it, so that events of one session are correlated.
///
/// With the number of events independent of the speed, the events of the
/// whole population are log-normal with `σ² = sessionSpread² +
/// eventSpread²`, so every true percentile is known exactly
/// (``trueQuantile(_:)``).
public struct FleetSimulation: Sendable {
    /// Sessions per side (per version and group).
    public var sessions = 500
    /// The range of events per session, drawn uniformly.
    public var eventsPerSession = 20...60
    /// The spread of a session's log speed.
    public var sessionSpread = 0.3
    /// The spread of an event's log duration within its session.
    public var eventSpread = 0.5
    /// The median duration, in nanoseconds.
    public var median = 40e6
    /// The percentiles reported.
    public var probabilities = [0.5, 0.9, 0.99]
    /// Metrics per report.
    public var metrics = 2
    /// Groups (device classes) per report.
    public var groups = 3
    /// The sessions' sketches' relative accuracy.
    public var relativeAccuracy = QuantileSketch.defaultRelativeAccuracy

    /// The default simulation.
    public init() {}

    /// The population's `p` percentile.
    public func trueQuantile(_ p: Double) -> Double {
        median
            * exp(
                NormalDistribution.quantile(p)
                    * (sessionSpread * sessionSpread + eventSpread * eventSpread).squareRoot())
    }

    /// One side's sessions, every duration multiplied by `factor`.
    public func sessionSketches(factor: Double = 1, generator: inout SeededGenerator) -> [QuantileSketch] {
        let width = UInt64(eventsPerSession.count)
        return (0..<sessions).map { _ in
            var sketch = QuantileSketch(relativeAccuracy: relativeAccuracy)
            let speed = median * factor * exp(sessionSpread * generator.normal())
            let events = eventsPerSession.lowerBound + Int(generator.next() % width)
            for _ in 0..<events { sketch.add(speed * exp(eventSpread * generator.normal())) }
            return sketch
        }
    }

    /// Over `trials` seeded trials, how often each percentile's 95% interval
    /// holds the true percentile, by probability.
    public func coverage(trials: Int, seed: UInt64) -> [Double: Double] {
        var generator = SeededGenerator(seed: seed)
        var covered = [Double: Int]()
        for _ in 0..<trials {
            let estimates = SessionQuantiles.estimate(
                sessions: sessionSketches(generator: &generator), probabilities: probabilities)
            for estimate in estimates {
                let truth = trueQuantile(estimate.probability)
                if estimate.lower <= truth, truth <= estimate.upper { covered[estimate.probability, default: 0] += 1 }
            }
        }
        return Dictionary(uniqueKeysWithValues: probabilities.map { ($0, Double(covered[$0] ?? 0) / Double(trials)) })
    }

    /// What reports comparing two versions concluded over `trials` seeded
    /// trials: the candidate's first metric is slower by `slowdown` (0.1 =
    /// 10%) in every group, the other metrics unchanged.
    public struct ReportRates: Sendable, Hashable {
        /// Reports with a regression on a metric that did not change.
        public var falseRegressionReports: Double
        /// Reports whose first metric's P90 in the first group is a
        /// regression.
        public var detectedP90: Double
        /// Comparisons per report.
        public var comparisonsPerReport: Int
    }

    /// Runs `trials` reports (see ``ReportRates``).
    public func reports(trials: Int, slowdown: Double, seed: UInt64) -> ReportRates {
        var generator = SeededGenerator(seed: seed)
        var falseReports = 0
        var detected = 0
        var perReport = 0
        for _ in 0..<trials {
            var comparisons: [SessionQuantiles.Comparison] = []
            var changed: [Bool] = []
            var firstP90: Int?
            for metric in 0..<metrics {
                for group in 0..<groups {
                    let baseline = SessionQuantiles.estimate(
                        sessions: sessionSketches(generator: &generator), probabilities: probabilities)
                    let candidate = SessionQuantiles.estimate(
                        sessions: sessionSketches(factor: metric == 0 ? 1 + slowdown : 1, generator: &generator),
                        probabilities: probabilities)
                    for (a, b) in zip(baseline, candidate) {
                        if metric == 0, group == 0, a.probability == 0.9 { firstP90 = comparisons.count }
                        comparisons.append(SessionQuantiles.Comparison(baseline: a, candidate: b))
                        changed.append(metric == 0 && slowdown != 0)
                    }
                }
            }
            perReport = comparisons.count
            let changes = SessionQuantiles.compare(comparisons)
            if zip(changes, changed).contains(where: { $0.verdict == .regression && !$1 }) { falseReports += 1 }
            if let firstP90, changes[firstP90].verdict == .regression { detected += 1 }
        }
        return ReportRates(
            falseRegressionReports: Double(falseReports) / Double(trials),
            detectedP90: Double(detected) / Double(trials),
            comparisonsPerReport: perReport)
    }
}
