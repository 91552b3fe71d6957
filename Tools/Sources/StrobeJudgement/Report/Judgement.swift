import Foundation
import StrobeResults
import StrobeStatistics

/// The one entry of a comparison's judgement: a look of `strobe compare`,
/// `strobe diff` and a simulation of either hand it the two sides'
/// replicates and get back every metric's verdict (a ``DiffReport``); the
/// fleet judges its percentiles with ``SessionQuantiles/compare(_:alpha:)``
/// by the same rules.
public enum Judgement {
    /// Judges `candidate` against `baseline`: groups their series into one
    /// ``ComparisonEngine/Input`` per metric, ``ComparisonEngine`` decides
    /// each, and the functions behind each test's verdict are judged.
    ///
    /// - Parameters:
    ///   - metricFilter: Only metrics whose names match.
    ///   - groupBy: A dimension to compare within (e.g. `device`).
    /// - Throws: ``DiffError`` when nothing can be compared: no common
    ///   metrics, or a metric whose unit differs between the sides.
    ///   - policy: Direction, floors and gating per metric. Its alpha and
    ///     default floor are not read here: resolve them into `options` with
    ///     ``ComparisonPolicy/options(overriding:alpha:minimumEffect:)``.
    ///   - look: The look of a sequential comparison; nil for a single one.
    public static func compare(
        baseline: SampleSet, candidate: SampleSet, metricFilter: Regex<AnyRegexOutput>? = nil, groupBy: String? = nil,
        options: ComparisonOptions = ComparisonOptions(), policy: ComparisonPolicy = ComparisonPolicy(),
        look: SequentialDesign.Look? = nil
    ) throws(DiffError) -> DiffReport {
        struct Key: Hashable, Comparable {
            var metric: String
            var group: String
            static func < (a: Key, b: Key) -> Bool { (a.metric, a.group) < (b.metric, b.group) }
        }
        struct Pool {
            var unit: String
            var better: MetricDirection
            var replicates = ReplicatePool()
            var source: String

            mutating func add(_ series: SampleSet.Series) {
                replicates.add(series.samples, process: series.run, round: series.round)
            }
        }
        func pool(_ set: SampleSet) throws(DiffError) -> [Key: Pool] {
            var pools: [Key: Pool] = [:]
            func key(_ series: SampleSet.Series) -> Key {
                Key(metric: series.metric, group: groupBy.map { series.dimensions[$0] ?? "(none)" } ?? "")
            }
            // Instructions a simulation counted and those the CPU counted
            // differ by the simulator's view of the code: where a side has
            // both, the simulated ones are compared.
            let simulatedCounts = Set(
                set.series.filter { $0.simulated && MetricDefaults.isInstructions($0.metric) }.map(key))
            for series in set.series {
                if let metricFilter, (try? metricFilter.firstMatch(in: series.metric)) == nil { continue }
                let key = key(series)
                if !series.simulated, simulatedCounts.contains(key) { continue }
                if var existing = pools[key] {
                    guard existing.unit == series.unit else {
                        throw unitMismatch(
                            series.metric, path: series.source, unit: series.unit, "here",
                            otherUnit: existing.unit, "in \(existing.source)")
                    }
                    existing.add(series)
                    pools[key] = existing
                } else {
                    var pool = Pool(unit: series.unit, better: series.better, source: series.source)
                    pool.add(series)
                    pools[key] = pool
                }
            }
            return pools
        }
        let base = try pool(baseline)
        let cand = try pool(candidate)
        var warnings: [WarningGroups.Item] = []
        var inputs: [ComparisonEngine.Input] = []
        for key in Set(base.keys).union(cand.keys).sorted() {
            guard let b = base[key], let c = cand[key] else {
                let side = base[key] == nil ? "candidate" : "baseline"
                warnings.append(.init(caveat: "only in the \(side)", metric: key.metric, group: key.group))
                continue
            }
            guard b.unit == c.unit else {
                throw unitMismatch(
                    key.metric, path: c.source, unit: c.unit, "in the candidate", otherUnit: b.unit,
                    "in the baseline (\(b.source))")
            }
            let settings = policy.settings(for: key.metric, unit: b.unit)
            inputs.append(
                ComparisonEngine.Input(
                    name: key.metric, group: key.group, unit: b.unit,
                    better: settings.better ?? b.better,
                    baseline: b.replicates.replicates, candidate: c.replicates.replicates,
                    relativeFloor: settings.relativeFloor,
                    absoluteFloor: settings.absoluteFloor, gates: settings.gates, summary: settings.summary,
                    isCount: MetricDefaults.isExactCount(key.metric), countTolerance: settings.countTolerance))
        }
        guard !inputs.isEmpty else {
            throw DiffError(path: "", problem: "the baseline and the candidate have no metric in common")
        }
        // The measuring thread's voluntary switches tell a test that waits
        // from one a neighbour preempted (``CountedWork``): kept in the
        // samples even where the thread's rows fold into the process's.
        let switches = inputs.filter { MetricDefaults.metricPart(of: $0.name) == CountedWork.threadSwitches }
        let folded = ThreadFolding.fold(&inputs)
        for dimension in ["host", "cpu_model", "build_configuration", "os"] {
            let left = Set(baseline.series.compactMap { $0.dimensions[dimension] }.filter { !$0.isEmpty })
            let right = Set(candidate.series.compactMap { $0.dimensions[dimension] }.filter { !$0.isEmpty })
            if !left.isEmpty, !right.isEmpty, left != right, dimension != groupBy {
                warnings.append(
                    .init(
                        caveat:
                            "baseline and candidate differ in \(dimension): \(left.sorted().joined(separator: ", ")) "
                            + "vs \(right.sorted().joined(separator: ", "))"
                    ))
            }
        }
        let rows = TestVerdict.ordered(ComparisonEngine.compare(inputs, options: options, look: look))
        warnings += WarningGroups.caveats(of: rows)
        var samples: [String: DiffReport.RawSamples] = [:]
        for input in inputs + switches {
            samples[DiffReport.sampleKey(input.name, input.group)] = .init(
                baseline: input.baseline.flatMap(\.samples), candidate: input.candidate.flatMap(\.samples))
        }
        var report = DiffReport(
            options: options, groupBy: groupBy, rows: rows, baselineSources: baseline.sources,
            candidateSources: candidate.sources, warnings: WarningGroups.render(warnings),
            samples: samples, look: look, foldedTests: folded)
        let paths = CriticalPathComparison.comparisons(
            baseline: baseline.criticalPaths, candidate: candidate.criticalPaths, groupBy: groupBy)
        report.criticalPaths = paths
        report.rows = report.rows.map { row in
            guard let verdict = paths.lazy.compactMap({ $0.verdictByWaits(for: row) }).first else { return row }
            var decided = row
            decided.verdict = verdict
            decided.decidedByWaits = true
            if let shift = row.shift, !SizedInterval.sizes(shift) { decided.notMeasuredFarEnough = true }
            return decided
        }
        report.testVerdicts = report.tests
        report.attachFunctionChanges(
            baseline: baseline.profiles, candidate: candidate.profiles,
            baselineInstructions: baseline.instructionProfiles, candidateInstructions: candidate.instructionProfiles)
        return report
    }

    /// The error for a metric measured in `unit` at `path` (`here`) but in
    /// `otherUnit` elsewhere (`there`): its samples cannot be pooled or
    /// compared.
    private static func unitMismatch(
        _ metric: String, path: String, unit: String, _ here: String, otherUnit: String, _ there: String
    ) -> DiffError {
        DiffError(path: path, problem: "metric \(metric) is in \(unit) \(here) but in \(otherUnit) \(there)")
    }
}
