import Foundation
import StrobeDiff
import StrobeJudgement
import StrobeStatistics

/// A simulated fleet, to measure the fleet report's intervals and verdicts:
/// sessions with a speed of their own (log-normal around 1) whose events
/// are log-normal around it, so that events of one session are correlated.
///
/// With the number of events independent of the speed, the events of the
/// whole population are log-normal with `σ² = sessionSpread² +
/// eventSpread²`, so every true percentile is known exactly
/// (``trueQuantile(_:)``).
package struct FleetSimulation: Sendable {
    /// Sessions per side (per version and group).
    package var sessions = 500
    /// The range of events per session, drawn uniformly.
    package var eventsPerSession = 20...60
    /// The spread of a session's log speed.
    package var sessionSpread = 0.3
    /// The spread of an event's log duration within its session.
    package var eventSpread = 0.5
    /// The median duration, in nanoseconds.
    package var median = 40e6
    /// The percentiles reported.
    package var probabilities = [0.5, 0.9, 0.99]
    /// Metrics per report.
    package var metrics = 2
    /// Groups (device classes) per report.
    package var groups = 3
    /// The sessions' sketches' relative accuracy.
    package var relativeAccuracy = QuantileSketch.defaultRelativeAccuracy

    /// The default simulation.
    package init() {}

    /// The population's `p` percentile.
    package func trueQuantile(_ p: Double) -> Double {
        median
            * exp(
                NormalDistribution.quantile(p)
                    * (sessionSpread * sessionSpread + eventSpread * eventSpread).squareRoot())
    }

    /// One side's sessions, every duration multiplied by `factor`.
    package func sessionSketches(factor: Double = 1, generator: inout SeededGenerator) -> [QuantileSketch] {
        var unused: [Double]?
        return sessionSketches(factor: factor, generator: &generator, values: &unused)
    }

    /// One side's sessions; when `values` is not nil, every duration is also
    /// appended to it (the same draws either way).
    func sessionSketches(factor: Double, generator: inout SeededGenerator, values: inout [Double]?)
        -> [QuantileSketch]
    {
        let width = UInt64(eventsPerSession.count)
        return (0..<sessions).map { _ in
            var sketch = QuantileSketch(relativeAccuracy: relativeAccuracy)
            let speed = median * factor * exp(sessionSpread * generator.normal())
            let events = eventsPerSession.lowerBound + Int(generator.next() % width)
            for _ in 0..<events {
                let value = speed * exp(eventSpread * generator.normal())
                sketch.add(value)
                values?.append(value)
            }
            return sketch
        }
    }

    /// Over `trials` seeded trials, how often each percentile's 95% interval
    /// holds the true percentile, by probability.
    package func coverage(trials: Int, seed: UInt64) -> [Double: Double] {
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

    /// What reports comparing two versions concluded, by the method and by
    /// an oracle on the same data (see ``study(reports:slowdown:seed:)``).
    package struct Study: Sendable, Hashable {
        /// Reports run.
        package var reports: Int
        /// Comparisons per report (metrics × groups × percentiles).
        package var comparisonsPerReport: Int
        /// Of the slowed metric's P90 comparisons (one per group and
        /// report), the share the method found a regression.
        package var methodPower: Double
        /// The same share for the oracle.
        package var oraclePower: Double
        /// Reports where the method found a regression on a metric that did
        /// not change.
        package var methodFalseRegressionReports: Double
        /// The same for the oracle.
        package var oracleFalseRegressionReports: Double
        /// By probability: how often the method's interval held the true
        /// percentile, over every side of every report.
        package var coverage: [Double: Double]
        /// By probability: the mean standard error of the log estimate that
        /// the method's intervals claim.
        package var claimedLogError: [Double: Double]
        /// By probability: the standard deviation of the method's log
        /// estimate over the sides (its true standard error).
        package var methodLogSpread: [Double: Double]
        /// By probability: the standard deviation of the exact pooled
        /// percentile's log over the sides, the oracle's standard error.
        package var exactLogSpread: [Double: Double]
        /// By probability: the root mean square of the log of the sketch's
        /// estimate over the exact percentile of the same events.
        package var sketchLogError: [Double: Double]
    }

    /// Runs `reports` seeded reports comparing two versions: the
    /// candidate's first metric is slower by `slowdown` (0.1 = 10%) in every
    /// group, the other metrics unchanged. Each is judged twice by
    /// ``StrobeStatistics/SessionQuantiles/compare(_:alpha:)`` (the same
    /// Benjamini–Hochberg family, floors, direction and tail rule): once with
    /// the method's estimates and intervals, once by an oracle that knows
    /// every event and the truth: the exact pooled percentile (no sketch)
    /// with its true standard error, measured as the spread of the exact
    /// percentiles over all the reports' sides. No method that reads the
    /// pooled percentile can do better than the oracle under the same
    /// false-alarm control.
    package func study(reports: Int, slowdown: Double, seed: UInt64) -> Study {
        var generator = SeededGenerator(seed: seed)
        struct Side {
            var estimates: [SessionQuantileEstimate]
            var exact: [Double]
            var truth: [Double]
        }
        var sides: [Side] = []
        sides.reserveCapacity(reports * metrics * groups * 2)
        var buffer: [Double]? = []
        for _ in 0..<reports {
            for metric in 0..<metrics {
                for _ in 0..<groups {
                    for factor in [1, metric == 0 ? 1 + slowdown : 1] {
                        buffer!.removeAll(keepingCapacity: true)
                        let sketches = sessionSketches(factor: factor, generator: &generator, values: &buffer)
                        sides.append(
                            Side(
                                estimates: SessionQuantiles.estimate(sessions: sketches, probabilities: probabilities),
                                exact: Self.exactQuantiles(&buffer!, probabilities),
                                truth: probabilities.map { trueQuantile($0) * factor }))
                    }
                }
            }
        }
        // Spreads by probability, of logs around the truth (the bias, the
        // same on every side, taken out).
        func spread(_ deviation: (Side, Int) -> Double) -> [Double: Double] {
            var result = [Double: Double]()
            for (slot, p) in probabilities.enumerated() {
                let values = sides.map { deviation($0, slot) }
                let mean = values.reduce(0, +) / Double(values.count)
                result[p] = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1))
                    .squareRoot()
            }
            return result
        }
        let exactSpread = spread { log($0.exact[$1] / $0.truth[$1]) }
        let methodSpread = spread { log($0.estimates[$1].estimate / $0.truth[$1]) }
        var coverage = [Double: Double]()
        var claimed = [Double: Double]()
        var sketchError = [Double: Double]()
        for (slot, p) in probabilities.enumerated() {
            let count = Double(sides.count)
            coverage[p] =
                Double(
                    sides.filter {
                        $0.estimates[slot].lower <= $0.truth[slot] && $0.truth[slot] <= $0.estimates[slot].upper
                    }
                    .count) / count
            claimed[p] = sides.reduce(0) { $0 + $1.estimates[slot].logStandardError } / count
            sketchError[p] =
                (sides.reduce(0) { $0 + pow(log($1.estimates[slot].estimate / $1.exact[slot]), 2) } / count)
                .squareRoot()
        }
        let z = NormalDistribution.quantile(0.975)
        // Per judge: slowed P90s found, and reports with a false regression.
        var found = (method: 0, oracle: 0)
        var falseReports = (method: 0, oracle: 0)
        var slowed = 0
        var perReport = 0
        let sidesPerReport = metrics * groups * 2
        for report in 0..<reports {
            var method: [SessionQuantiles.Comparison] = []
            var oracle: [SessionQuantiles.Comparison] = []
            var changed: [Bool] = []
            var slowedP90: [Int] = []
            for pair in 0..<(metrics * groups) {
                let baseline = sides[report * sidesPerReport + 2 * pair]
                let candidate = sides[report * sidesPerReport + 2 * pair + 1]
                for (slot, p) in probabilities.enumerated() {
                    let isChanged = pair < groups && slowdown != 0
                    if isChanged, p == 0.9 { slowedP90.append(method.count) }
                    method.append(.init(baseline: baseline.estimates[slot], candidate: candidate.estimates[slot]))
                    func known(_ side: Side) -> SessionQuantileEstimate {
                        let error = exactSpread[p] ?? 0
                        let value = side.exact[slot]
                        return SessionQuantileEstimate(
                            probability: p, estimate: value, lower: value * exp(-z * error),
                            upper: value * exp(z * error), confidence: 0.95, logStandardError: error,
                            sessions: side.estimates[slot].sessions, events: side.estimates[slot].events,
                            tailEvents: side.estimates[slot].tailEvents)
                    }
                    oracle.append(.init(baseline: known(baseline), candidate: known(candidate)))
                    changed.append(isChanged)
                }
            }
            perReport = method.count
            let methodChanges = SessionQuantiles.compare(method)
            let oracleChanges = SessionQuantiles.compare(oracle)
            slowed += slowedP90.count
            func foundSlowed(_ changes: [SessionQuantileChange]) -> Int {
                slowedP90.filter { changes[$0].verdict == .regression }.count
            }
            func falseRegression(_ changes: [SessionQuantileChange]) -> Int {
                zip(changes, changed).contains { $0.verdict == .regression && !$1 } ? 1 : 0
            }
            found.method += foundSlowed(methodChanges)
            found.oracle += foundSlowed(oracleChanges)
            falseReports.method += falseRegression(methodChanges)
            falseReports.oracle += falseRegression(oracleChanges)
        }
        return Study(
            reports: reports, comparisonsPerReport: perReport,
            methodPower: slowed == 0 ? 0 : Double(found.method) / Double(slowed),
            oraclePower: slowed == 0 ? 0 : Double(found.oracle) / Double(slowed),
            methodFalseRegressionReports: Double(falseReports.method) / Double(reports),
            oracleFalseRegressionReports: Double(falseReports.oracle) / Double(reports),
            coverage: coverage, claimedLogError: claimed, methodLogSpread: methodSpread,
            exactLogSpread: exactSpread, sketchLogError: sketchError)
    }

    /// Woodruff's intervals against a bootstrap over sessions on the same
    /// sides (see ``intervalCheck(sides:resamples:seed:)``).
    package struct IntervalCheck: Sendable, Hashable {
        /// Sides (sets of sessions) checked.
        package var sides: Int
        /// Resamples per bootstrap interval.
        package var resamples: Int
        /// By probability: how often Woodruff's interval held the truth.
        package var woodruffCoverage: [Double: Double]
        /// By probability: how often the bootstrap's interval held it.
        package var bootstrapCoverage: [Double: Double]
        /// By probability: Woodruff's mean width over the true percentile.
        package var woodruffWidth: [Double: Double]
        /// By probability: the bootstrap's mean width over the true
        /// percentile.
        package var bootstrapWidth: [Double: Double]
    }

    /// Over `sides` seeded sets of sessions, Woodruff's 95% intervals and
    /// percentile-bootstrap intervals of `resamples` resamples of sessions
    /// (`SessionQuantiles.bootstrap`):
    /// how often each holds the true percentile, and how wide each is.
    package func intervalCheck(sides: Int, resamples: Int, seed: UInt64) -> IntervalCheck {
        var generator = SeededGenerator(seed: seed)
        var resampling = SeededGenerator(seed: seed ^ 0x5EED)
        var covered = (woodruff: [Double: Int](), bootstrap: [Double: Int]())
        var width = (woodruff: [Double: Double](), bootstrap: [Double: Double]())
        for _ in 0..<sides {
            let sketches = sessionSketches(generator: &generator)
            let woodruff = SessionQuantiles.estimate(sessions: sketches, probabilities: probabilities)
            let bootstrap = SessionQuantiles.bootstrap(
                sessions: sketches, probabilities: probabilities, resamples: resamples, generator: &resampling)
            for (a, b) in zip(woodruff, bootstrap) {
                let truth = trueQuantile(a.probability)
                if a.lower <= truth, truth <= a.upper { covered.woodruff[a.probability, default: 0] += 1 }
                if b.lower <= truth, truth <= b.upper { covered.bootstrap[b.probability, default: 0] += 1 }
                width.woodruff[a.probability, default: 0] += (a.upper - a.lower) / truth
                width.bootstrap[b.probability, default: 0] += (b.upper - b.lower) / truth
            }
        }
        func rate(_ counts: [Double: Int]) -> [Double: Double] {
            Dictionary(uniqueKeysWithValues: probabilities.map { ($0, Double(counts[$0] ?? 0) / Double(sides)) })
        }
        func mean(_ sums: [Double: Double]) -> [Double: Double] {
            Dictionary(uniqueKeysWithValues: probabilities.map { ($0, (sums[$0] ?? 0) / Double(sides)) })
        }
        return IntervalCheck(
            sides: sides, resamples: resamples, woodruffCoverage: rate(covered.woodruff),
            bootstrapCoverage: rate(covered.bootstrap), woodruffWidth: mean(width.woodruff),
            bootstrapWidth: mean(width.bootstrap))
    }

    /// The `probabilities` quantiles of `values` as
    /// ``StrobeStatistics/Quantiles/quantile(sorted:_:)`` gives them of the
    /// sorted values, by selection rather than sorting; `values` is
    /// reordered.
    static func exactQuantiles(_ values: inout [Double], _ probabilities: [Double]) -> [Double] {
        guard !values.isEmpty else { return probabilities.map { _ in .nan } }
        let order = probabilities.indices.sorted { probabilities[$0] < probabilities[$1] }
        var result = [Double](repeating: .nan, count: probabilities.count)
        values.withUnsafeMutableBufferPointer { buffer in
            let n = buffer.count
            var start = 0
            for index in order {
                let position = min(max(probabilities[index], 0), 1) * Double(n - 1)
                let k = Int(position.rounded(.down))
                select(&buffer, k, from: start)
                let lower = buffer[k]
                var upper = lower
                if k + 1 < n {
                    upper = buffer[k + 1]
                    for other in (k + 1)..<n where buffer[other] < upper { upper = buffer[other] }
                }
                result[index] = lower + (upper - lower) * (position - Double(k))
                start = k
            }
        }
        return result
    }

    /// Reorders `buffer[start...]` so that position `k` holds the value a
    /// sort would put there, smaller ones before it and larger after
    /// (Hoare's selection).
    private static func select(_ buffer: inout UnsafeMutableBufferPointer<Double>, _ k: Int, from start: Int) {
        var low = start
        var high = buffer.count - 1
        while low < high {
            let a = buffer[low]
            let b = buffer[(low + high) / 2]
            let c = buffer[high]
            let pivot = max(min(a, b), min(max(a, b), c))
            var i = low
            var j = high
            while i <= j {
                while buffer[i] < pivot { i += 1 }
                while buffer[j] > pivot { j -= 1 }
                if i <= j {
                    buffer.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j {
                high = j
            } else if k >= i {
                low = i
            } else {
                return
            }
        }
    }
}
