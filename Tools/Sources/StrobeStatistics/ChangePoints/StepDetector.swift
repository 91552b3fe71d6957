import Foundation

/// Finds the steps in performance histories: where a metric's level changed
/// from one run to the next, judged with each run (process) as one value.
///
/// The method, for each series:
///
/// 1. **Scan.** Rank binary segmentation: the strongest split of a segment
///    by the standardized Mann–Whitney statistic, with at least
///    `minimumSegment` runs on each side, tested by the tail of the maximum
///    over all splits (`RankScan`), over the whole segment and over seeded
///    intervals inside it (`SeededScan`). A significant split divides the
///    segment and both halves are scanned again; each boundary is then
///    placed again between its final neighbours, by ranks and then by the
///    least absolute deviation of log values
///    (`place(_:near:lower:upper:shortestAfter:options:)`); the last
///    boundary may come as close as 3 runs to the end, a *possible* step
///    until the runs after it make a segment.
/// 2. **The end.** The last 3 to `minimumSegment − 1` runs of the last
///    segment are tested against the runs before them with the exact
///    permutation distribution of their rank sum (Bonferroni over the
///    lengths tried). A significant end is a *possible* step.
/// 3. **Many series.** A series' p-value is the smaller of its whole-series
///    scan's divided by 0.75 and its end test's divided by 0.25 (weighted
///    Bonferroni between the two). Series
///    whose Benjamini–Hochberg adjusted p-value is at most `alpha` are
///    segmented, every later test at the level BH granted them; the others
///    report nothing. When every series is flat, the chance of any report is
///    at most `alpha`. A series of counted work, whose values repeat within
///    ``CountedLevels/tolerance``, is walked by ``CountedLevels`` instead,
///    outside the family: it steps where its level moves past the tolerance.
/// 4. **Reporting.** Each step's change is the Hodges–Lehmann ratio between
///    the runs on either side with its distribution-free interval; steps no
///    larger than the metric's floor are not reported (they still divide
///    the series).
public enum StepDetector {
    /// The steps of `histories`, judged together as one family.
    ///
    /// - Throws: ``SeriesAnalysisError`` for an empty series, a value that is not a
    ///   finite positive number, a negative floor or an option out of range.
    public static func detect(
        _ histories: [MetricHistory], options: StepDetectionOptions = StepDetectionOptions()
    ) throws(SeriesAnalysisError) -> HistoryReport {
        try options.validate()
        for history in histories { try history.validate() }
        // Counted series are walked level by level, outside the family.
        let counted = histories.map { CountedLevels.repeats($0.values) }
        let ranked = histories.indices.filter { !counted[$0] }
        let first = histories.indices.map { index -> (scan: SeededScan?, end: EndTest?) in
            counted[index] ? (nil, nil) : firstLook(histories[index].values[...], options: options)
        }
        let pValues = first.map {
            min(1, ($0.scan?.pValue ?? 1) / scanWeight, ($0.end?.pValue ?? 1) / (1 - scanWeight))
        }
        var adjusted = pValues
        for (index, value) in zip(ranked, MultipleComparisons.benjaminiHochberg(ranked.map { pValues[$0] })) {
            adjusted[index] = value
        }
        let rejected = ranked.filter { adjusted[$0] <= options.alpha }.count
        let level = options.alpha * Double(rejected) / Double(max(ranked.count, 1))
        var series: [SeriesSteps] = []
        for (index, history) in histories.enumerated() {
            if counted[index] {
                series.append(CountedLevels.steps(history, options: options))
                continue
            }
            var steps: [HistoryStep] = []
            var possible: PossibleChange?
            if adjusted[index] <= options.alpha {
                steps = segment(history, level: level, options: options)
            } else if adjusted[index] <= options.alpha * PossibleChange.levelFactor {
                // Where the series' p-value came from: the scan's split, or
                // the end test's last runs.
                let scanP = (first[index].scan?.pValue ?? 1) / scanWeight
                let endP = (first[index].end?.pValue ?? 1) / (1 - scanWeight)
                if let end = first[index].end, endP < scanP {
                    possible = possibleChange(
                        history, split: history.values.count - end.runsAfter, pValue: end.pValue,
                        weight: 1 - scanWeight, adjusted: adjusted[index], series: histories.count, options: options)
                } else if let scan = first[index].scan {
                    possible = possibleChange(
                        history, split: scan.split, pValue: scan.pValue, weight: scanWeight,
                        adjusted: adjusted[index], series: histories.count, options: options)
                }
            }
            series.append(
                SeriesSteps(
                    metric: history.name, pValue: pValues[index], adjustedPValue: adjusted[index], steps: steps,
                    possibleChange: possible))
        }
        return HistoryReport(series: series, options: options)
    }

    /// A split of a series short of the level (the scan's, or where the end
    /// test's last runs begin), and about how many more runs like those
    /// after it would confirm it: the test's normal score now, against the
    /// score its share of the worst Benjamini–Hochberg level (`alpha` over
    /// the series) asks, grown as √(n·m/(n+m)) with m.
    /// Nil for a split whose change lies within the metric's floor.
    static func possibleChange(
        _ history: MetricHistory, split: Int, pValue: Double, weight: Double, adjusted: Double, series: Int,
        options: StepDetectionOptions
    ) -> PossibleChange? {
        let values = history.values
        let before = Double(split)
        let after = Double(values.count - split)
        guard before >= 1, after >= 1,
            let shift = ShiftEstimate.hodgesLehmann(
                baseline: Array(values[..<split]), candidate: Array(values[split...])),
            abs(shift.ratio - 1) > history.relativeFloor
        else { return nil }
        let now = NormalDistribution.quantile(1 - min(max(pValue, 1e-300), 0.5) / 2)
        let needed = NormalDistribution.quantile(1 - options.alpha * weight / Double(max(series, 1)) / 2)
        var more = 0
        func scale(_ m: Double) -> Double { (before * m / (before + m)).squareRoot() }
        while more < 1000, now * scale(after + Double(more)) / scale(after) < needed { more += 1 }
        guard more < 1000 else { return nil }
        return PossibleChange(firstAfter: split, adjustedPValue: adjusted, runsToConfirm: max(more, 1))
    }

    /// The share of a series' level given to the scan; the end test has the rest.
    static let scanWeight = 0.75

    /// The whole-series scan and end test of one series.
    static func firstLook(_ values: ArraySlice<Double>, options: StepDetectionOptions) -> (
        scan: SeededScan?, end: EndTest?
    ) {
        (SeededScan.best(values, minimumSegment: options.minimumSegment), EndTest.test(values, options: options))
    }

    /// A boundary found by the scan, with the p-value that admitted it.
    private struct Boundary {
        var index: Int
        var pValue: Double
    }

    /// The steps of a series that was found to change, every test at `level`.
    static func segment(_ history: MetricHistory, level: Double, options: StepDetectionOptions) -> [HistoryStep] {
        let values = history.values
        let scanLevel = level * scanWeight
        let endLevel = level * (1 - scanWeight)
        var boundaries: [Boundary] = []
        var pending = [0..<values.count]
        while let range = pending.popLast() {
            guard let scan = SeededScan.best(values[range], minimumSegment: options.minimumSegment),
                scan.pValue <= scanLevel
            else { continue }
            let split = scan.split
            boundaries.append(Boundary(index: split, pValue: scan.pValue))
            pending.append(range.lowerBound..<split)
            pending.append(split..<range.upperBound)
        }
        boundaries.sort { $0.index < $1.index }
        // Each boundary again between its final neighbours: the first split
        // of a segment holding several steps can sit between two of them.
        // The last boundary may come closer to the end than a segment, down
        // to the shortest end tested: a step a few runs before the newest
        // would else be pushed back to leave a whole segment after it.
        for position in boundaries.indices {
            let lower = position == 0 ? 0 : boundaries[position - 1].index
            let last = position + 1 == boundaries.count
            let upper = last ? values.count : boundaries[position + 1].index
            if let scan = RankScan.scan(values[lower..<upper], minimumSegment: options.minimumSegment, pValue: false) {
                boundaries[position].index = place(
                    values, near: lower + scan.split, lower: lower, upper: upper,
                    shortestAfter: last ? EndTest.shortest : options.minimumSegment, options: options)
            }
        }
        var steps: [HistoryStep] = []
        for (position, boundary) in boundaries.enumerated() {
            let lower = position == 0 ? 0 : boundaries[position - 1].index
            let upper = position + 1 == boundaries.count ? values.count : boundaries[position + 1].index
            // Placed closer to the end than a segment: confirmed once the
            // runs after it make one.
            let runsAfter = upper - boundary.index
            let status: StepStatus =
                runsAfter < options.minimumSegment
                ? .possible(runsToConfirm: options.minimumSegment - runsAfter) : .confirmed
            if let step = makeStep(
                history, at: boundary.index, lower: lower, upper: upper, pValue: boundary.pValue, level: scanLevel,
                status: status, options: options)
            {
                steps.append(step)
            }
        }
        let lastStart = boundaries.last?.index ?? 0
        if let end = EndTest.test(values[lastStart...], options: options), end.pValue <= endLevel {
            let index = values.count - end.runsAfter
            if let step = makeStep(
                history, at: index, lower: lastStart, upper: values.count, pValue: end.pValue, level: endLevel,
                status: .possible(runsToConfirm: options.minimumSegment - end.runsAfter), options: options)
            {
                steps.append(step)
            }
        }
        return steps
    }

    /// How far from the rank scan's split the placement looks.
    static let placementReach = 3

    /// The split near `split` (within ``placementReach`` runs, or toward the
    /// end that many and a segment more when `shortestAfter` is shorter than
    /// a segment and `split` within two segments of `upper`, keeping
    /// `minimumSegment` runs before it and `shortestAfter` after it within
    /// `lower..<upper`) that leaves
    /// the least absolute deviation of log values from the medians of the two
    /// sides, over the runs within `estimateWindow` of `split`.
    ///
    /// Ranks see only the order of the runs: when the step is large against
    /// the noise, the highest runs of the old level rank just below the new
    /// level and can pull the rank scan's split a run or two early. The
    /// absolute deviations see the size of the gap, and medians keep one slow
    /// process from moving the split.
    static func place(
        _ values: [Double], near split: Int, lower: Int, upper: Int, shortestAfter: Int,
        options: StepDetectionOptions
    ) -> Int {
        // Split within two segments of the series' end, a last boundary
        // looks a segment further toward it: the scan never splits closer
        // to the end than a segment, and a few runs of the old level that
        // sit high pull its split earlier.
        let nearTheEnd = shortestAfter < options.minimumSegment && upper - split <= 2 * options.minimumSegment
        let reachAfter = placementReach + (nearTheEnd ? options.minimumSegment : 0)
        let first = max(lower + options.minimumSegment, split - placementReach)
        let last = min(upper - shortestAfter, split + reachAfter)
        guard first < last else { return split }
        let logs = values[max(lower, split - options.estimateWindow)..<min(upper, split + options.estimateWindow)].map {
            log($0)
        }
        let offset = max(lower, split - options.estimateWindow)
        var best = split
        var bestCost = Double.infinity
        for candidate in first...last {
            let cost = splitCost(logs, at: candidate - offset)
            if cost < bestCost || (cost == bestCost && abs(candidate - split) < abs(best - split)) {
                best = candidate
                bestCost = cost
            }
        }
        return best
    }

    /// The absolute deviations of `logs` from the medians of the two sides
    /// of a split at `split` (an index into `logs`), summed.
    static func splitCost(_ logs: [Double], at split: Int) -> Double {
        func deviation(_ side: ArraySlice<Double>) -> Double {
            let center = Quantiles.median(sorted: side.sorted())
            return side.reduce(0) { $0 + abs($1 - center) }
        }
        return deviation(logs[..<split]) + deviation(logs[split...])
    }

    /// The change across `index`: Hodges–Lehmann, at the options'
    /// confidence, between up to `estimateWindow` runs of `lower..<upper`
    /// on either side of it, with how many runs each side had.
    static func changeAcross(
        _ history: MetricHistory, at index: Int, lower: Int, upper: Int, options: StepDetectionOptions
    ) -> (change: ShiftEstimate, runsBefore: Int, runsAfter: Int)? {
        let before = Array(history.values[max(lower, index - options.estimateWindow)..<index])
        let after = Array(history.values[index..<min(upper, index + options.estimateWindow)])
        return ShiftEstimate.hodgesLehmann(baseline: before, candidate: after, confidence: options.confidence).map {
            ($0, before.count, after.count)
        }
    }

    /// The step at `index` between the runs of `lower..<upper`, or nil when
    /// its change is within the metric's floor.
    static func makeStep(
        _ history: MetricHistory, at index: Int, lower: Int, upper: Int, pValue: Double, level: Double,
        status: StepStatus, options: StepDetectionOptions
    ) -> HistoryStep? {
        guard
            let (change, runsBefore, runsAfter) = changeAcross(
                history, at: index, lower: lower, upper: upper, options: options),
            abs(change.change) > history.relativeFloor, change.ratio != 1
        else { return nil }
        let worse = history.better == .lower ? change.ratio > 1 : change.ratio < 1
        return HistoryStep(
            metric: history.name, lastBefore: index - 1, firstAfter: index, change: change, pValue: pValue,
            level: level, direction: worse ? .regression : .improvement, status: status,
            runsBefore: runsBefore, runsAfter: runsAfter)
    }
}

/// The test of the last few runs of a series: did the level change so
/// recently that fewer than a minimum segment of runs follow the step?
///
/// For each length k from 3 to `minimumSegment − 1`, the rank sum of the
/// last k runs among the last `estimateWindow` runs (at least
/// `minimumSegment` of them before the k) is judged by its exact permutation
/// distribution; the smallest two-sided p-value times the number of lengths
/// tried is the test's p-value. Three runs is the shortest length kept: two
/// slow processes in a row are common in a bimodal metric (one chance in
/// four when half the processes are slow), and their exact p-value cannot
/// get small enough anyway.
struct EndTest: Sendable, Hashable {
    /// The shortest end that is tested.
    static let shortest = 3

    /// How many runs follow the step.
    var runsAfter: Int
    /// Bonferroni-adjusted over the lengths tried.
    var pValue: Double

    /// The test of the end of `values`, or nil when no length can be tried.
    static func test(_ values: ArraySlice<Double>, options: StepDetectionOptions) -> EndTest? {
        let longest = options.minimumSegment - 1
        let window = values.suffix(options.estimateWindow)
        let lengths = (shortest...max(shortest, longest)).filter {
            $0 <= longest && window.count - $0 >= options.minimumSegment
        }
        guard let largest = lengths.last else { return nil }
        let midRanks = MidRanks(window)
        let scores = midRanks.ranks.map { Int(($0 * 2).rounded()) }
        let distribution = RankSumDistribution(scores: scores, largest: largest)
        var best = EndTest(runsAfter: lengths[0], pValue: 1)
        for k in lengths {
            let observed = scores.suffix(k).reduce(0, +)
            let p = distribution.twoSidedPValue(k: k, observed: observed)
            if p < best.pValue { best = EndTest(runsAfter: k, pValue: p) }
        }
        best.pValue = min(1, best.pValue * Double(lengths.count))
        return best
    }
}
