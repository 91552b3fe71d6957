import Foundation
import StrobeResults
import StrobeStatistics

/// Compares metrics between two sets of replicates.
public enum ComparisonEngine {
    /// Compares every input at one look (by default the single look of a
    /// fixed-size comparison: the options' alpha and confidence); p-values
    /// are adjusted across the gated inputs, and separately across the
    /// report-only ones.
    public static func compare(
        _ inputs: [Input], options: ComparisonOptions = ComparisonOptions(), look: SequentialDesign.Look? = nil
    ) -> [MetricComparison] {
        let level = look?.alpha ?? options.alpha
        let confidence = look?.confidence ?? options.confidence
        let tests = inputs.map { input in
            toleranceTest(input) ?? countTest(input)
                ?? ReplicateTest.compare(baseline: input.baseline, candidate: input.candidate, summary: input.summary)
        }
        // Gated and report-only metrics are separate families, so metrics
        // that only inform do not dilute the gate's error control.
        var adjusted = [Double](repeating: 1, count: inputs.count)
        for gates in [true, false] {
            let family = inputs.indices.filter { inputs[$0].gates == gates }
            let values = MultipleComparisons.benjaminiHochberg(family.map { tests[$0].pValue })
            for (index, value) in zip(family, values) { adjusted[index] = value }
        }
        // The per-test level that BH needs at worst, for the rounds estimate.
        let gatedCount = inputs.filter(\.gates).count
        let worstCaseLevel = level / Double(max(gatedCount, 1))
        return inputs.indices.map { index in
            let input = inputs[index]
            let test = tests[index]
            let floor = input.relativeFloor ?? options.minimumEffect
            // A count the same in every iteration of every process on each
            // side (the exact method) is judged by its difference alone;
            // one that varies is judged like any metric, with a floor of at
            // least one count.
            let constantCount = input.isCount && isConstant(input.baseline) && isConstant(input.candidate)
            // A constant count seen in fewer processes a side than the
            // options ask waits for more: whether it repeats from process
            // to process is not yet seen.
            let fewestProcesses = min(processCount(input.baseline), processCount(input.candidate))
            let awaitsRepeat = constantCount && fewestProcesses < options.exactCountProcesses
            // A counted metric with a tolerance (instructions) whose sides
            // spread within it is judged by the ratio of their centers.
            let countSpread = Self.countSpread(input)
            let withinTolerance = isWithinTolerance(input)
            let varyingCount = input.isCount && !constantCount
            let absoluteFloor = varyingCount ? max(input.absoluteFloor, MetricDefaults.countFloor) : input.absoluteFloor
            let pooledBase = input.baseline.flatMap(\.samples)
            let pooledCand = input.candidate.flatMap(\.samples)
            let countMeans = varyingCount && test.method != .iterations
            let center = { (replicates: [Replicate]) -> Double in
                let values = replicates.filter { !$0.samples.isEmpty }.map { replicate in
                    countMeans
                        ? replicate.samples.reduce(0, +) / Double(replicate.samples.count)
                        : input.summary.value(of: replicate.samples)
                }
                return values.isEmpty ? .nan : Quantiles.median(sorted: values.sorted())
            }
            let baseCenter = center(input.baseline)
            // The change and its interval at a confidence, as a ratio (nil
            // when the baseline's center is not positive) and in the unit.
            func estimate(confidence: Double) -> (ShiftEstimate?, (lower: Double, upper: Double)) {
                let interval = test.interval(confidence: confidence)
                if test.logScale {
                    return (
                        ShiftEstimate(
                            ratio: exp(test.estimate), lower: exp(interval.lower), upper: exp(interval.upper),
                            confidence: confidence),
                        (baseCenter * (exp(interval.lower) - 1), baseCenter * (exp(interval.upper) - 1))
                    )
                }
                guard baseCenter > 0 else { return (nil, interval) }
                return (
                    ShiftEstimate(
                        ratio: max(1 + test.estimate / baseCenter, 0), lower: max(1 + interval.lower / baseCenter, 0),
                        upper: max(1 + interval.upper / baseCenter, 0), confidence: confidence),
                    interval
                )
            }
            var (shift, differenceInterval) = estimate(confidence: confidence)
            // The change in the metric's unit, from the same test as its
            // interval, so that the estimate always lies inside it (the
            // difference of the sides' medians need not). Sides without any
            // spread, and exact counts (summarised by their means, judged
            // against a floor of whole counts), differ by the difference of
            // their centers, which is what "+1 allocation per iteration" says.
            let difference =
                test.method == .exact || input.isCount
                ? center(input.candidate) - baseCenter
                : test.logScale ? baseCenter * (exp(test.estimate) - 1) : test.estimate
            var warnings: [String] = []
            if let note = nonStationaryNote(input) { warnings.append(note) }
            let enough: Bool
            switch test.method {
            case .exact where awaitsRepeat:
                enough = false
                warnings.append(
                    "counted in \(fewestProcesses) process\(fewestProcesses == 1 ? "" : "es") on a side: a count can "
                        + "repeat within one process and differ in the next, so it is judged once "
                        + "\(options.exactCountProcesses) processes on each side have counted it")
            case .exact:
                enough = true
            case .iterations:
                warnings.append(MetricComparison.singleProcessWarning)
                enough = min(pooledBase.count, pooledCand.count) >= 2
            case .pairedRounds, .processes:
                enough = true
            }
            if shift == nil && test.method != .exact {
                warnings.append(MetricComparison.zeroBaselineWarning)
            }
            if let tolerance = input.countTolerance, let countSpread, !withinTolerance {
                warnings.append(spreadWarning(spread: countSpread, tolerance: tolerance))
            } else if varyingCount, input.countTolerance == nil,
                let warning = varyingCountWarning(baseline: pooledBase, candidate: pooledCand)
            {
                warnings.append(warning)
            }
            // "Unchanged" is an equivalence test (two one-sided tests,
            // Schuirmann 1987): each floor is crossed with probability at
            // most half the miss rate, so the interval that must lie inside
            // the floors has confidence 1 − 2·(1 − confidence).
            let equivalence = test.interval(confidence: max(1 - 2 * (1 - confidence), 0.5))
            var equivalenceRatio: (lower: Double, upper: Double)?
            var equivalenceDifference = (lower: equivalence.lower, upper: equivalence.upper)
            if test.logScale {
                equivalenceRatio = (exp(equivalence.lower), exp(equivalence.upper))
                equivalenceDifference = (
                    baseCenter * (exp(equivalence.lower) - 1), baseCenter * (exp(equivalence.upper) - 1)
                )
            } else if baseCenter > 0 {
                equivalenceRatio = (1 + equivalence.lower / baseCenter, 1 + equivalence.upper / baseCenter)
            }
            let verdict =
                enough
                ? decide(
                    test: test, shift: shift, difference: difference, equivalenceRatio: equivalenceRatio,
                    equivalenceDifference: equivalenceDifference, adjustedPValue: adjusted[index], level: level,
                    better: input.better, relativeFloor: floor, absoluteFloor: absoluteFloor,
                    byRatio: withinTolerance)
                : .inconclusive
            // A change is shown with the interval of the test that found it:
            // at an early sequential look the intervals' own confidence is
            // far higher than the look's level (their miss rate is spent
            // mostly at the last looks), and an interval that crosses zero
            // beside "p < 0.0001, regression" would contradict the verdict.
            if verdict == .regression || verdict == .improvement, 1 - level < confidence {
                (shift, differenceInterval) = estimate(confidence: 1 - level)
            }
            var needed: Int?
            var advice: [DecisionAdvice] = []
            var iterationShare: Double?
            if verdict == .inconclusive {
                needed = roundsNeeded(
                    test, shift: shift, relativeFloor: floor, absoluteFloor: absoluteFloor, level: worstCaseLevel,
                    power: options.power)
                iterationShare = iterationNoiseShare(input, test: test)
                advice = Self.advice(test: test, roundsNeeded: needed, iterationNoiseShare: iterationShare)
            }
            var row = MetricComparison(
                name: input.name, group: input.group, unit: input.unit, better: input.better,
                gates: input.gates, relativeFloor: floor, absoluteFloor: absoluteFloor, summary: input.summary,
                baseline: SampleSummary(pooledBase, percentiles: options.percentiles),
                candidate: SampleSummary(pooledCand, percentiles: options.percentiles),
                test: test, shift: shift, difference: difference,
                differenceLower: differenceInterval.lower, differenceUpper: differenceInterval.upper,
                mannWhitney: RankTests.mannWhitney(pooledBase, pooledCand),
                kolmogorovSmirnov: RankTests.kolmogorovSmirnov(pooledBase, pooledCand),
                adjustedPValue: adjusted[index], level: level, verdict: verdict, roundsNeeded: needed, advice: advice,
                iterationNoiseShare: iterationShare, warnings: warnings, isCount: input.isCount,
                isConstantCount: constantCount, countTolerance: input.countTolerance, countSpread: countSpread)
            let candidateCenter = center(input.candidate)
            row.baselineCenter = baseCenter.isFinite ? baseCenter : nil
            row.candidateCenter = candidateCenter.isFinite ? candidateCenter : nil
            return row
        }
    }

    /// The factor between two processes of one side past which a time
    /// metric's noise is not stationary: the machine's speed changed.
    public static let nonStationaryRatio = 2.0

    /// A note for a time metric (in a unit of time) one of whose sides has a
    /// process at least ``nonStationaryRatio`` times slower than another:
    /// the processes are not draws from one distribution (a neighbour took
    /// the machine for a while), so the spread a test sees is not the
    /// spread it will see, and the verdict rests on the pairing by round.
    static func nonStationaryNote(_ input: Input) -> String? {
        guard !input.isCount, MetricKind.timeUnits.contains(input.unit) else { return nil }
        for (label, side) in [("baseline", input.baseline), ("candidate", input.candidate)] {
            let values = side.filter { !$0.samples.isEmpty }.map { input.summary.value(of: $0.samples) }
                .filter { $0 > 0 }
            guard values.count >= 2, let low = values.min(), let high = values.max(), high / low >= nonStationaryRatio
            else { continue }
            return "the noise is not stationary: one \(label) process took "
                + String(format: "%.1f", high / low)
                + "× as long as another (the machine's speed changed during the comparison); "
                + "the verdict rests on the pairing by round"
        }
        return nil
    }

    /// What would decide an inconclusive metric, most useful first:
    /// - more iterations per process, when the iterations' own noise is at
    ///   least half the variance of a process's summary;
    /// - a longer budget, when at most three times the rounds run so far
    ///   would decide a change the size of the floor;
    /// - otherwise a quieter machine (or a wider floor).
    static func advice(test: ReplicateTestResult, roundsNeeded: Int?, iterationNoiseShare: Double?) -> [DecisionAdvice]
    {
        // A single process on a side has its own caveat: run more processes.
        guard test.method == .pairedRounds || test.method == .processes else { return [] }
        var advice: [DecisionAdvice] = []
        if let share = iterationNoiseShare, share >= 0.5 { advice.append(.moreIterations) }
        let current = min(test.baselineReplicates, test.candidateReplicates)
        if let needed = roundsNeeded, current > 0, needed <= 2 * current {
            advice.append(.longerBudget)
        } else if advice.isEmpty {
            advice.append(.quieterMachine)
        }
        return advice
    }

    /// The share of the variance of one replicate's summary that the noise
    /// of its own iterations explains: the within-process variance of the
    /// iterations (on the analysis scale) over the iterations per process,
    /// times π/2 for a median (or the variance of a minimum is not known:
    /// nil), against the variance of the replicates' summaries. Nil when
    /// the replicates have fewer than two iterations or no spread.
    static func iterationNoiseShare(_ input: Input, test: ReplicateTestResult) -> Double? {
        guard input.summary == .median, test.method == .pairedRounds || test.method == .processes else { return nil }
        let replicates = (input.baseline + input.candidate).filter { $0.samples.count >= 2 }
        guard !replicates.isEmpty else { return nil }
        var withinSum = 0.0
        var weight = 0.0
        var iterations = 0.0
        for replicate in replicates {
            let values = test.logScale ? replicate.samples.map { log($0) } : replicate.samples
            let (_, variance) = ReplicateTest.meanAndVariance(values)
            withinSum += variance * Double(values.count - 1)
            weight += Double(values.count - 1)
            iterations += Double(values.count)
        }
        let perProcess = iterations / Double(replicates.count)
        guard weight > 0 else { return nil }
        // The variance of a median of k values is about π/2 times that of
        // their mean; a paired difference holds two summaries.
        let summaryVariance = (withinSum / weight) * Double.pi / 2 / perProcess
        let replicateVariance =
            test.replicateSpread * test.replicateSpread
            / (test.method == .pairedRounds ? 2 : 1)
        guard replicateVariance > 0 else { return nil }
        return min(summaryVariance / replicateVariance, 1)
    }

    /// The verdict of one metric.
    ///
    /// - Metrics with no spread on either side (deterministic counts) are
    ///   judged by the absolute floor alone: any change larger than it;
    ///   with `byRatio` (a counted metric within its tolerance), a change
    ///   must also exceed the relative floor.
    /// - Otherwise a change is flagged when its adjusted p-value is at most
    ///   `level` and it exceeds both floors (the relative one only where a
    ///   ratio exists; a zero baseline has none). A significant change below
    ///   a floor, or an equivalence interval (confidence 1 − 2·miss) inside
    ///   a floor, is "unchanged"; anything else is "inconclusive".
    static func decide(
        test: ReplicateTestResult, shift: ShiftEstimate?, difference: Double,
        equivalenceRatio: (lower: Double, upper: Double)?, equivalenceDifference: (lower: Double, upper: Double),
        adjustedPValue: Double, level: Double, better: MetricDirection, relativeFloor: Double, absoluteFloor: Double,
        byRatio: Bool = false
    ) -> Verdict {
        let worse = better == .lower ? difference > 0 : difference < 0
        if test.method == .exact {
            guard abs(difference) > absoluteFloor else { return .unchanged }
            if byRatio, let shift, abs(shift.change) <= relativeFloor { return .unchanged }
            return worse ? .regression : .improvement
        }
        // A change that equals the floor, up to rounding (a ratio turned
        // back into the unit), does not exceed it.
        let exceedsAbsolute = abs(difference) > absoluteFloor * (1 + 1e-9) + 1e-12
        if adjustedPValue <= level {
            let exceedsRelative = shift.map { abs($0.change) > relativeFloor } ?? true
            guard exceedsRelative, exceedsAbsolute else { return .unchanged }
            let direction = shift.map { better == .lower ? $0.change > 0 : $0.change < 0 } ?? worse
            return direction ? .regression : .improvement
        }
        if let ratio = equivalenceRatio, ratio.lower >= 1 - relativeFloor, ratio.upper <= 1 + relativeFloor {
            return .unchanged
        }
        // With no absolute floor this holds only for an interval that is
        // exactly zero: sides that do not differ at all (identical inputs).
        if equivalenceDifference.lower >= -absoluteFloor, equivalenceDifference.upper <= absoluteFloor {
            return .unchanged
        }
        return .inconclusive
    }

    /// About how many more rounds would decide a change the size of the
    /// floor: the replicates a t-test at `level` needs for `power` against
    /// it (``DecisionPower/replicatesToDetect(_:spread:level:power:)``
    /// pairs, twice that per side when unpaired), minus those already run.
    static func roundsNeeded(
        _ test: ReplicateTestResult, shift: ShiftEstimate?, relativeFloor: Double, absoluteFloor: Double, level: Double,
        power: Double
    ) -> Int? {
        guard test.method == .pairedRounds || test.method == .processes else { return nil }
        let effect: Double
        if test.logScale {
            effect = DecisionPower.logFloor(relativeFloor)
        } else if absoluteFloor > 0 {
            effect = absoluteFloor
        } else {
            return nil
        }
        let spread = test.replicateSpread
        guard spread > 0, effect > 0 else { return 1 }
        var perSide = DecisionPower.replicatesToDetect(effect, spread: spread, level: level, power: power)
        if test.method == .processes { perSide *= 2 }
        guard perSide.isFinite, perSide < 1e9 else { return nil }
        let current = min(test.baselineReplicates, test.candidateReplicates)
        return max(Int(perSide.rounded(.up)) - current, 1)
    }
}
