import Foundation
import StrobeJudgement
import StrobeStatistics

/// How many iterations a suite process should measure, from the split of
/// the noise between processes and within them.
///
/// Each process is one replicate, summarised by its iterations. The
/// variance of that summary is about `σ_b² + σ_w²/k` for `k` iterations
/// (`σ_b²` the spread of processes around the side's level, `σ_w²` that of
/// iterations around their process's), and a process costs `c + k·t`: its
/// start, its once-per-process setup and its warm-up, then `k` iterations
/// of `t`. The information per second, `1 / ((σ_b² + σ_w²/k)(c + k·t))`,
/// is largest at `k = √(σ_w²·c / (σ_b²·t))`: where processes differ more
/// than iterations do, or where iterations are long beside a process's
/// start, fewer iterations per process and more processes decide sooner;
/// where iterations scatter and processes agree, more of them.
///
/// That optimum holds for many rounds. A look tests with a t statistic of
/// `n − 1` degrees of freedom at a small level, whose quantile is large for
/// few rounds (about 8.6 for 5 rounds at a two-sided 0.001, against 3.3 for
/// many), so
/// few long rounds decide later than the information per second says. The
/// plan therefore takes, of the `k` from 2 to 20, the one whose rounds
/// reach the target soonest: the fewest rounds `n` with
/// `n ≥ ((t₁₋ₗₑᵥₑₗ/₂(n − 1) + z₀.₈)·σ_r(k) / δ)²`, `σ_r(k)² = 2(σ_b² + σ_w²/k)`
/// the variance of a round's paired difference and `δ` the log distance the
/// hardest open metric must cover (its change, or its room inside the
/// floor), times the seconds `2(c + k·t)` of a round.
struct IterationPlan: Equatable {
    /// The iterations each process should measure.
    var iterations: Int
    /// The spread of iterations within a process, as a fraction (log scale).
    var within: Double
    /// The spread of processes around their side's level, as a fraction.
    var between: Double

    /// The rounds before the first plan: the spread between processes of a
    /// side needs a few of them.
    static let roundsBeforePlanning = 4

    /// The fewest and most iterations a plan chooses.
    static let range = 2...20

    /// The plan for the open `tests` from their wall times so far; nil when
    /// there is too little to split (fewer than 2 processes a side, or
    /// fewer than 2 iterations per process). `processSeconds` is the mean
    /// time a process took with `current` measured iterations; its warm-up
    /// iterations count with its start, as they run whatever k is.
    ///
    /// `target` is the log distance the hardest open metric must cover and
    /// `level` the two-sided level of a look (see the type's comment).
    static func plan(
        baseline: SampleSet, candidate: SampleSet, tests: [String], processSeconds: Double, iterations current: Int,
        target: Double, level: Double
    ) -> IterationPlan? {
        var withinTerms: [(sum: Double, degrees: Int)] = []
        var betweenVariances: [Double] = []
        var iterationSeconds = 0.0
        var counts: [Int] = []
        for test in tests {
            var testIteration: [Double] = []
            for set in [baseline, candidate] {
                let processes = Dictionary(
                    grouping: set.series.filter { $0.metric == "\(test)/wall" && !$0.samples.isEmpty }, by: \.run
                ).mapValues { $0.flatMap(\.samples).filter { $0 > 0 } }
                let logs = processes.values.filter { $0.count >= 2 }.map { $0.map(Foundation.log) }
                guard logs.count >= 2 else { continue }
                var sum = 0.0
                var degrees = 0
                var means: [Double] = []
                for values in logs {
                    let mean = values.reduce(0, +) / Double(values.count)
                    sum += values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
                    degrees += values.count - 1
                    means.append(mean)
                    counts.append(values.count)
                }
                withinTerms.append((sum, degrees))
                let grand = means.reduce(0, +) / Double(means.count)
                betweenVariances.append(
                    means.reduce(0) { $0 + ($1 - grand) * ($1 - grand) } / Double(means.count - 1))
                testIteration += processes.values.flatMap { $0 }
            }
            if !testIteration.isEmpty {
                iterationSeconds += testIteration.sorted()[testIteration.count / 2] / 1e9
            }
        }
        let degrees = withinTerms.reduce(0) { $0 + $1.degrees }
        guard degrees > 0, !betweenVariances.isEmpty, iterationSeconds > 0 else { return nil }
        let within = withinTerms.reduce(0) { $0 + $1.sum } / Double(degrees)
        let iterationsSeen = Double(counts.reduce(0, +)) / Double(max(counts.count, 1))
        // The spread of process means holds σ_w²/k of iteration noise; what
        // is left is the processes' own (at least a tenth of the iterations'
        // share, so that a side of agreeing processes does not ask for
        // without end).
        let observed = betweenVariances.reduce(0, +) / Double(betweenVariances.count)
        let between = max(observed - within / iterationsSeen, within / iterationsSeen / 10, 1e-12)
        // What a process costs before it measures: its start, its setup and
        // its warm-up iterations, which run whatever k is.
        let perProcess = max(processSeconds - Double(current) * iterationSeconds, iterationSeconds / 4)
        // The seconds each k takes to reach the target; the first of the
        // quickest wins.
        var quantiles = DecisionPower.TQuantiles(level: level)
        let seconds = range.map { k in
            quantiles.roundsToReach(target, roundVariance: 2 * (between + within / Double(k)))
                * (perProcess + Double(k) * iterationSeconds)
        }
        let iterations = range.lowerBound + seconds.indices.min { seconds[$0] < seconds[$1] }!
        return IterationPlan(iterations: iterations, within: within.squareRoot(), between: between.squareRoot())
    }
}
