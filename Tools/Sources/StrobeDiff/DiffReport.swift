import Foundation
import StrobeResults
import StrobeStatistics

/// The comparison of a baseline with a candidate: one row per metric (and
/// group), counts per verdict, and warnings.
public struct DiffReport: Sendable, Codable {
    /// The settings used.
    public var options: ComparisonOptions
    /// The dimension rows were grouped by, if any.
    public var groupBy: String?
    /// One row per metric and group: by test, its gated metrics first, then
    /// by name.
    public var rows: [MetricComparison]
    /// Files read for each side.
    public var baselineSources: [String]
    /// Files read for each side.
    public var candidateSources: [String]
    /// Things a reader should know: different machines or builds, metrics on
    /// one side only.
    public var warnings: [String]
    /// Every raw sample of each row, keyed by `metric` or `metric [group]`.
    public var samples: [String: RawSamples]

    /// The raw samples of one row.
    public struct RawSamples: Sendable, Codable, Hashable {
        /// Baseline samples.
        public var baseline: [Double]
        /// Candidate samples.
        public var candidate: [Double]
    }

    /// The key of a row in ``samples``.
    static func sampleKey(_ metric: String, _ group: String) -> String {
        group.isEmpty ? metric : "\(metric) [\(group)]"
    }

    /// The look of a sequential comparison (`strobe compare`) this report
    /// was made at; nil for a single comparison.
    public var look: SequentialDesign.Look?

    /// Tests whose `thread.*` metrics were folded into their `process.*`
    /// ones: they ran on one thread, so both measured the same thing.
    public var foldedTests: [String] = []

    /// How many rows reached `verdict`.
    public func count(_ verdict: Verdict) -> Int { rows.filter { $0.verdict == verdict }.count }

    /// How many gated rows reached `verdict`.
    public func gatedCount(_ verdict: Verdict) -> Int { rows.filter { $0.gates && $0.verdict == verdict }.count }

    /// Gated rows that regressed.
    public var gatedRegressions: [MetricComparison] { rows.filter { $0.gates && $0.verdict == .regression } }

    /// Gated rows still inconclusive.
    public var undecided: [MetricComparison] { rows.filter { $0.gates && $0.verdict == .inconclusive } }

    /// 1 when a gated metric regressed, else 0.
    public var exitStatus: Int32 { gatedRegressions.isEmpty ? 0 : 1 }

    /// One verdict per test (and group) that has a gated metric, in the
    /// order of the rows.
    public var tests: [TestVerdict] { TestVerdict.verdicts(of: rows) }

    /// ``tests`` as they were when the report was made, for JSON readers.
    public var testVerdicts: [TestVerdict] = []

    /// The per-test summary: "3 tests slower: decode +61% [+58, +64], …;
    /// 1 unchanged"; the metric counts when no test has a gated metric.
    public var headline: String {
        let tests = self.tests
        guard !tests.isEmpty else { return metricCounts }
        func plural(_ count: Int) -> String { count == 1 ? "test" : "tests" }
        func listed(_ items: [String]) -> String {
            items.prefix(5).joined(separator: ", ") + (items.count > 5 ? " and \(items.count - 5) more" : "")
        }
        var parts: [String] = []
        for (outcome, word) in [(TestVerdict.Outcome.slower, "slower"), (.faster, "faster")] {
            let matching = tests.filter { $0.outcome == outcome }
            guard !matching.isEmpty else { continue }
            parts.append("\(matching.count) \(plural(matching.count)) \(word): " + listed(matching.map(\.summary)))
        }
        let undecided = tests.filter { $0.outcome == .undecided }
        if !undecided.isEmpty {
            parts.append(
                "\(undecided.count) \(plural(undecided.count)) inconclusive: " + listed(undecided.map(\.displayName)))
        }
        let unchanged = tests.filter { $0.outcome == .unchanged }.count
        if unchanged > 0 { parts.append("\(unchanged) \(plural(unchanged)) unchanged") }
        return parts.joined(separator: "; ")
    }

    /// "gated metrics: 2 regressions, 0 improvements, 14 unchanged, 3
    /// inconclusive; 20 reported only".
    public var metricCounts: String {
        func plural(_ count: Int, _ word: String, _ words: String) -> String { "\(count) \(count == 1 ? word : words)" }
        let reported = rows.filter { !$0.gates }.count
        return "gated metrics: "
            + [
                plural(gatedCount(.regression), "regression", "regressions"),
                plural(gatedCount(.improvement), "improvement", "improvements"),
                "\(gatedCount(.unchanged)) unchanged", "\(gatedCount(.inconclusive)) inconclusive",
            ].joined(separator: ", ") + (reported > 0 ? "; \(reported) reported only" : "")
    }
}

/// Builds a ``DiffReport`` from two sample sets.
public enum DiffEngine {
    /// Compares `candidate` with `baseline`.
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
    public static func diff(
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
            for series in set.series {
                if let metricFilter, (try? metricFilter.firstMatch(in: series.metric)) == nil { continue }
                let group = groupBy.map { series.dimensions[$0] ?? "(none)" } ?? ""
                let key = Key(metric: series.metric, group: group)
                if var existing = pools[key] {
                    guard existing.unit == series.unit else {
                        throw DiffError(
                            path: series.source,
                            problem:
                                "metric \(series.metric) is in \(series.unit) here but in \(existing.unit) in \(existing.source)"
                        )
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
                throw DiffError(
                    path: c.source,
                    problem:
                        "metric \(key.metric) is in \(c.unit) in the candidate but in \(b.unit) in the baseline (\(b.source))"
                )
            }
            let settings = policy.settings(for: key.metric, unit: b.unit)
            inputs.append(
                ComparisonEngine.Input(
                    name: key.metric, group: key.group, unit: b.unit,
                    better: settings.better ?? b.better,
                    baseline: b.replicates.replicates, candidate: c.replicates.replicates,
                    relativeFloor: settings.relativeFloor,
                    absoluteFloor: settings.absoluteFloor, gates: settings.gates, summary: settings.summary,
                    isCount: MetricDefaults.isExactCount(key.metric)))
        }
        guard !inputs.isEmpty else {
            throw DiffError(path: "", problem: "the baseline and the candidate have no metric in common")
        }
        let folded = ThreadFolding.fold(&inputs)
        for dimension in ["host", "cpu_model", "build_configuration", "os"] {
            let left = Set(baseline.series.compactMap { $0.dimensions[dimension] }.filter { !$0.isEmpty })
            let right = Set(candidate.series.compactMap { $0.dimensions[dimension] }.filter { !$0.isEmpty })
            if !left.isEmpty, !right.isEmpty, left != right, dimension != groupBy {
                warnings.append(
                    .init(
                        caveat:
                            "baseline and candidate differ in \(dimension): \(left.sorted().joined(separator: ", ")) vs \(right.sorted().joined(separator: ", "))"
                    ))
            }
        }
        let rows = TestVerdict.ordered(ComparisonEngine.compare(inputs, options: options, look: look))
        warnings += WarningGroups.caveats(of: rows)
        var samples: [String: DiffReport.RawSamples] = [:]
        for input in inputs {
            samples[DiffReport.sampleKey(input.name, input.group)] = .init(
                baseline: input.baseline.flatMap(\.samples), candidate: input.candidate.flatMap(\.samples))
        }
        return DiffReport(
            options: options, groupBy: groupBy, rows: rows, baselineSources: baseline.sources,
            candidateSources: candidate.sources, warnings: WarningGroups.render(warnings),
            samples: samples, look: look, foldedTests: folded, testVerdicts: TestVerdict.verdicts(of: rows))
    }
}
