import Foundation

/// The steps of a series of counted work (instructions, allocations): a
/// series whose values repeat from run to run within ``tolerance``, so that
/// its level is known exactly and a step is where the level moves past the
/// tolerance and stays there.
///
/// Such a series needs no rank test: its noise is a fraction of the
/// smallest change worth naming, and ranks would only order that noise. The
/// walk keeps the current level (the median of the runs since the last
/// step) and finds a step at the first run that lies beyond the tolerance
/// from it, where the runs from there agree with each other (within the
/// tolerance) and stay on that side: confirmed when ``minimumHeld`` or more
/// of them do (`minimumSegment`), possible when the series ends after at
/// least three. A run or two off the level and back is one process out of
/// line, not a step. The metric's relative floor does not apply: a counted
/// level that moves past the tolerance has moved.
public enum CountedLevels {
    /// The relative tolerance within which a counted series' values are one
    /// level: 0.2%. Set from the measured spread of the simulated
    /// `instructions` count across processes of one build (at most 0.009%
    /// on the demo's suite, 0.0014% for its two-thread test, none for a
    /// single-threaded one: `make bench simulation`), with a wide margin
    /// for suites whose bookkeeping varies more (hashing, the allocator's
    /// paths), so that one build's processes always agree and a change of
    /// the code by a fraction of a percent still shows.
    public static let tolerance = 0.002

    /// The share of consecutive runs that must agree within ``tolerance``
    /// for a series to be walked as counted: 0.8 (the rest are its steps
    /// and the odd process out of line).
    static let agreeingShare = 0.8

    /// The fewest runs a counted series must have to be walked.
    static let shortestSeries = 6

    /// The fewest runs at a new level that make a possible step at the end.
    static let shortestEnd = 3

    /// Whether `values` repeat within ``tolerance``: at least
    /// ``agreeingShare`` of consecutive pairs agree, and the series is long
    /// enough to tell.
    public static func repeats(_ values: [Double]) -> Bool {
        guard values.count >= shortestSeries, values.allSatisfy({ $0.isFinite && $0 > 0 }) else { return false }
        let agreeing = zip(values, values.dropFirst()).filter { agree($0, $1) }.count
        return Double(agreeing) >= agreeingShare * Double(values.count - 1)
    }

    /// Whether `a` and `b` are one level: their ratio within ``tolerance``.
    static func agree(_ a: Double, _ b: Double) -> Bool { abs(log(b / a)) <= tolerance }

    /// The steps of a counted series (see ``repeats(_:)``), as ``StepDetector``
    /// reports them: each step's change is the Hodges–Lehmann ratio of the
    /// runs on either side (within `estimateWindow`, never past a
    /// neighbouring step), its p-value the normal approximation of the rank
    /// statistic of that split (for the record; the level decides).
    static func steps(_ history: MetricHistory, options: StepDetectionOptions) -> SeriesSteps {
        let values = history.values
        var starts: [(index: Int, held: Int)] = []
        var start = 0
        var index = 1
        while index < values.count {
            let level = Quantiles.median(sorted: values[start..<index].sorted())
            guard !agree(level, values[index]), index - start >= shortestEnd else {
                index += 1
                continue
            }
            let up = values[index] > level
            var end = index + 1
            while end < values.count, !agree(level, values[end]), (values[end] > level) == up,
                agree(Quantiles.median(sorted: values[index..<end].sorted()), values[end])
            {
                end += 1
            }
            let held = end - index
            if held >= options.minimumSegment || (end == values.count && held >= shortestEnd) {
                starts.append((index, held))
                start = index
            }
            index += 1
        }
        var steps: [HistoryStep] = []
        for (position, found) in starts.enumerated() {
            let lower = position == 0 ? 0 : starts[position - 1].index
            let upper = position + 1 == starts.count ? values.count : starts[position + 1].index
            let before = Array(values[max(lower, found.index - options.estimateWindow)..<found.index])
            let after = Array(values[found.index..<min(upper, found.index + options.estimateWindow)])
            guard
                let change = ShiftEstimate.hodgesLehmann(
                    baseline: before, candidate: after, confidence: options.confidence),
                abs(log(change.ratio)) > tolerance
            else { continue }
            let span = (found.index - before.count)..<(found.index + after.count)
            let pValue = RankScan.splitPValue(values[span], split: before.count)
            let worse = history.better == .lower ? change.ratio > 1 : change.ratio < 1
            let status: StepStatus =
                found.held >= options.minimumSegment
                ? .confirmed : .possible(runsToConfirm: options.minimumSegment - found.held)
            steps.append(
                HistoryStep(
                    metric: history.name, lastBefore: found.index - 1, firstAfter: found.index, change: change,
                    pValue: pValue, level: options.alpha, direction: worse ? .regression : .improvement,
                    status: status, runsBefore: before.count, runsAfter: after.count))
        }
        let pValue = steps.map(\.pValue).min() ?? 1
        return SeriesSteps(metric: history.name, pValue: pValue, adjustedPValue: pValue, steps: steps)
    }

    /// Whether the counted series `values` moved past the tolerance at
    /// `night` ± 1 over the nights of `span`: the median of the nights
    /// before `night − 1` against the median of those from `night + 1`.
    static func moved(_ values: [Double], at night: Int, span: Range<Int>) -> Bool {
        let clamped = span.clamped(to: 0..<values.count)
        let before = values[clamped.lowerBound..<max(clamped.lowerBound, min(night - 1, clamped.upperBound))]
        let after = values[min(max(night + 1, clamped.lowerBound), clamped.upperBound)..<clamped.upperBound]
        guard !before.isEmpty, !after.isEmpty else { return false }
        return !agree(Quantiles.median(sorted: before.sorted()), Quantiles.median(sorted: after.sorted()))
    }
}
