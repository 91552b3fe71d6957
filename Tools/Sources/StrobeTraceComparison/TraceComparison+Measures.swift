import Foundation
import StrobeFlameGraph
import StrobeStatistics

/// The statistics of a comparison of traces: each measure's shift and
/// p-value, the adjustment across them, the verdicts and the order.
extension TraceComparison {
    /// One measure of both sides: medians, the shift of at most
    /// ``Options/instancesEstimated`` instances a side, and the p-value of
    /// them all.
    static func measure(_ baseline: [Double], _ candidate: [Double], options: Options) -> MeasureChange {
        func median(_ values: [Double]) -> Double { values.isEmpty ? 0 : Quantiles.median(sorted: values.sorted()) }
        func spaced(_ values: [Double]) -> [Double] {
            guard values.count > options.instancesEstimated else { return values }
            let step = Double(values.count) / Double(options.instancesEstimated)
            return (0..<options.instancesEstimated).map { values[Int(Double($0) * step)] }
        }
        var change = MeasureChange(
            baselineCount: baseline.count, candidateCount: candidate.count, baselineMedian: median(baseline),
            candidateMedian: median(candidate), shift: nil, pValue: 1)
        guard !baseline.isEmpty, !candidate.isEmpty else {
            change.verdict = .missing
            return change
        }
        change.shift = ShiftEstimate.hodgesLehmann(
            baseline: spaced(baseline), candidate: spaced(candidate), confidence: 1 - options.alpha)
        change.pValue = RankTests.mannWhitney(baseline, candidate).pValue
        return change
    }

    /// One measure of both sides by its means: their ratio, its interval by
    /// the delta method on the log of the ratio, and the z-test's p-value.
    /// For thread CPU time and blocked time: rusage counts CPU time in
    /// clock ticks, so most short instances read 0 or a whole tick, and only
    /// the mean over many of them tells the time.
    static func meanMeasure(_ baseline: [Double], _ candidate: [Double], options: Options) -> MeasureChange {
        func moments(_ values: [Double]) -> (mean: Double, variance: Double) {
            let mean = values.reduce(0, +) / Double(max(values.count, 1))
            let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(max(values.count - 1, 1))
            return (mean, variance)
        }
        let (b, c) = (moments(baseline), moments(candidate))
        var change = MeasureChange(
            baselineCount: baseline.count, candidateCount: candidate.count, baselineMedian: b.mean,
            candidateMedian: c.mean, shift: nil, pValue: 1, byMeans: true)
        guard !baseline.isEmpty, !candidate.isEmpty else {
            change.verdict = .missing
            return change
        }
        guard b.mean > 0, c.mean > 0 else { return change }
        let error =
            (b.variance / (Double(baseline.count) * b.mean * b.mean)
            + c.variance / (Double(candidate.count) * c.mean * c.mean)).squareRoot()
        let ratio = c.mean / b.mean
        let z = NormalDistribution.quantile(1 - options.alpha / 2)
        change.shift = ShiftEstimate(
            ratio: ratio, lower: ratio * exp(-z * error), upper: ratio * exp(z * error), confidence: 1 - options.alpha)
        change.pValue = error > 0 ? 2 * (1 - NormalDistribution.cdf(abs(log(ratio)) / error)) : (ratio == 1 ? 1 : 0)
        return change
    }

    /// Adjusts every measure's p-value across all of them and calls each
    /// change.
    static func judge(_ changes: inout [IntervalChange], options: Options) {
        let paths: [WritableKeyPath<IntervalChange, MeasureChange?>] = [
            \.optionalDuration, \.cpuTime, \.blockedTime, \.criticalPath,
        ]
        var tested: [(Int, WritableKeyPath<IntervalChange, MeasureChange?>)] = []
        for index in changes.indices {
            for path in paths where changes[index][keyPath: path].map({ $0.verdict != .missing }) ?? false {
                tested.append((index, path))
            }
        }
        let adjusted = MultipleComparisons.benjaminiHochberg(tested.map { changes[$0.0][keyPath: $0.1]?.pValue ?? 1 })
        for ((index, path), p) in zip(tested, adjusted) {
            guard var measure = changes[index][keyPath: path] else { continue }
            measure.adjustedPValue = p
            if let shift = measure.shift, p <= options.alpha {
                if shift.lower > 1 + options.minimumEffect {
                    measure.verdict = .slower
                } else if shift.upper < 1 - options.minimumEffect {
                    measure.verdict = .faster
                }
            }
            changes[index][keyPath: path] = measure
        }
    }

    /// Changed names first, the largest change of duration first; then by
    /// name.
    static func order(_ change: IntervalChange) -> (Int, Double, String) {
        let changed = [change.duration, change.cpuTime, change.blockedTime, change.criticalPath].contains {
            $0.map { $0.verdict == .slower || $0.verdict == .faster } ?? false
        }
        let size = change.duration.shift.map { abs(log($0.ratio)) } ?? 0
        return (changed ? 0 : 1, changed ? -size : 0, change.name)
    }

    /// The functions of the samples inside a name's instances whose
    /// inclusive amount per instance changed by at least `floor` (and by
    /// ``FrameChange/relativeShare``) and by more than the samples' own
    /// noise, the largest change first, at most 8; a function counted once
    /// per stack. A caller that is not new or gone gives way to a function
    /// it always calls that carries its change (at least nine tenths of it,
    /// the same way), so the list names where the time moved, not every
    /// frame above it; a new or gone function is named whatever carries its
    /// time.
    ///
    /// `samplesPerAmount` turns each side's amounts back into sample counts:
    /// a function's counts are Poisson, so a change is kept only when it lies
    /// beyond twice the standard deviation of the difference of its two
    /// rates. One sample that lands in a function on one side and not on the
    /// other is not a new function.
    static func functionMoves(
        _ baseline: [FlameStack], _ candidate: [FlameStack], floor: Double,
        samplesPerAmount: (baseline: Double, candidate: Double)
    ) -> [FunctionMove] {
        func inclusive(_ stacks: [FlameStack]) -> [String: Double] {
            var amounts: [String: Double] = [:]
            for stack in stacks { for name in Set(stack.frames) { amounts[name, default: 0] += stack.amount } }
            return amounts
        }
        func beyondSamplingNoise(_ before: Double, _ after: Double) -> Bool {
            let (baseRate, candidateRate) = (samplesPerAmount.baseline, samplesPerAmount.candidate)
            guard baseRate > 0, candidateRate > 0 else { return true }
            // The variance of an amount whose count is n samples is n / rate².
            let variance = before / baseRate + after / candidateRate
            return abs(after - before) > 2 * variance.squareRoot()
        }
        let base = inclusive(baseline)
        let cand = inclusive(candidate)
        var moves: [FunctionMove] = []
        for name in Set(base.keys).union(cand.keys) {
            let before = base[name] ?? 0
            let after = cand[name] ?? 0
            let change = FrameChange.of(baseline: before, candidate: after, floor: floor)
            if change != .unchanged, beyondSamplingNoise(before, after) {
                moves.append(FunctionMove(function: name, baseline: before, candidate: after, change: change))
            }
        }
        let callers = commonCallers(baseline + candidate)
        let carried = Set(
            moves.flatMap { callee in
                (callers[callee.function] ?? []).filter { caller in
                    guard let move = moves.first(where: { $0.function == caller }),
                        move.change != .new, move.change != .gone
                    else { return false }
                    let (outer, inner) = (move.candidate - move.baseline, callee.candidate - callee.baseline)
                    return outer * inner > 0 && abs(inner) >= 0.9 * abs(outer)
                }
            })
        moves.removeAll { carried.contains($0.function) }
        // The largest move first; of two the same size, a new or gone one.
        func rank(_ move: FunctionMove) -> (Double, Int, String) {
            (-abs(move.candidate - move.baseline), move.change == .new || move.change == .gone ? 0 : 1, move.function)
        }
        return Array(moves.sorted { rank($0) < rank($1) }.prefix(8))
    }

    /// For each function, the functions above it in every stack it is on:
    /// the callers whose time in it is all of its time.
    static func commonCallers(_ stacks: [FlameStack]) -> [String: Set<String>] {
        var callers: [String: Set<String>] = [:]
        for stack in stacks {
            for (depth, name) in stack.frames.enumerated() {
                let above = Set(stack.frames[..<depth]).subtracting([name])
                callers[name] = callers[name].map { $0.intersection(above) } ?? above
            }
        }
        return callers
    }
}

extension TraceComparison.IntervalChange {
    /// ``duration`` as an optional, so that one key path type reaches every
    /// measure.
    var optionalDuration: TraceComparison.MeasureChange? {
        get { duration }
        set { if let newValue { duration = newValue } }
    }
}
