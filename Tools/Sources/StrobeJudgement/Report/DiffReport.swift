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
    package static func sampleKey(_ metric: String, _ group: String) -> String {
        group.isEmpty ? metric : "\(metric) [\(group)]"
    }

    /// The look of a sequential comparison (`strobe compare`) this report
    /// was made at; nil for a single comparison.
    public var look: SequentialDesign.Look?

    /// Tests whose `thread.*` metrics were folded into their `process.*`
    /// ones: they ran on one thread, so both measured the same thing.
    public var foldedTests: [String] = []

    /// Whose verdicts these are: nil when this report judged the results
    /// itself; else the decisions `strobe compare` recorded beside them,
    /// shown as it reached them or, on request, judged again.
    public var origin: DecisionOrigin?

    /// The line that says whose verdicts these are; nil when this report
    /// judged the results itself.
    public var originLine: String? { origin?.line }

    /// How many rows reached `verdict`.
    public func count(_ verdict: Verdict) -> Int { rows.filter { $0.verdict == verdict }.count }

    /// How many gated rows reached `verdict`.
    public func gatedCount(_ verdict: Verdict) -> Int { rows.filter { $0.gates && $0.verdict == verdict }.count }

    /// Gated rows that regressed.
    public var gatedRegressions: [MetricComparison] { rows.filter { $0.gates && $0.verdict == .regression } }

    /// Gated rows still inconclusive, less the times their test's counted
    /// work settled (``settled``).
    public var undecided: [MetricComparison] {
        rows.filter { $0.gates && $0.verdict == .inconclusive && $0.settledByCounts == nil }
    }

    /// Gated time rows that their test's counted work settled
    /// (``MetricComparison/settledByCounts``).
    public var settled: [MetricComparison] { rows.filter { $0.gates && $0.settledByCounts != nil } }

    /// 1 when a gated metric regressed, else 0.
    public var exitStatus: Int32 { gatedRegressions.isEmpty ? 0 : 1 }

    /// One verdict per test (and group) that has a gated metric, in the
    /// order of the rows.
    public var tests: [TestVerdict] { TestVerdict.verdicts(of: rows, criticalPaths: criticalPaths ?? []) }

    /// What the critical path of each interval a test measures crossed on
    /// both sides (``CriticalPathComparison``), for the tests whose
    /// processes recorded one; nil in reports recorded before it existed.
    public var criticalPaths: [CriticalPathComparison]?

    /// ``tests`` as they were when the report was made, for JSON readers.
    public var testVerdicts: [TestVerdict] = []

    /// The functions behind each profiled test's verdict, in the order of
    /// the tests: empty unless both sides ran with `--profile`.
    public var functionChanges: [TestFunctionChanges] = []

    /// The function changes of the tests that came out slower or faster.
    public var changedTestFunctions: [(verdict: TestVerdict, functions: TestFunctionChanges)] {
        let byTest = Dictionary(functionChanges.map { ($0.test, $0) }, uniquingKeysWith: { first, _ in first })
        return tests.filter { $0.outcome == .slower || $0.outcome == .faster }.compactMap { verdict in
            byTest[verdict.displayName].map { (verdict, $0) }
        }
    }

    /// The per-test summary: "3 tests slower: decode +61% [+58, +64], …;
    /// 1 test's work unchanged, time undecided: load (instructions ±0.0%,
    /// allocations ±0); 1 unchanged"; the metric counts when no test has a
    /// gated metric.
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
        let undecided = tests.filter { $0.outcome == .undecided && $0.unchangedWork == nil }
        if !undecided.isEmpty {
            parts.append(
                "\(undecided.count) \(plural(undecided.count)) inconclusive: " + listed(undecided.map(\.displayName)))
        }
        // The counts are the strongest evidence: a test whose work is
        // unchanged is not "inconclusive" for want of a decided time.
        let sameWork = tests.filter { $0.unchangedWork != nil }
        if !sameWork.isEmpty {
            let their = sameWork.count == 1 ? "test's" : "tests'"
            parts.append(
                "\(sameWork.count) \(their) work unchanged, time undecided: "
                    + listed(sameWork.map { "\($0.displayName) (\($0.unchangedWork ?? ""))" }))
        }
        let unchanged = tests.filter { $0.outcome == .unchanged && $0.unchangedWork == nil }.count
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
                "\(gatedCount(.unchanged)) unchanged", "\(undecided.count) inconclusive",
            ].joined(separator: ", ") + (settled.isEmpty ? "" : ", \(settled.count) times left to the counts")
            + (reported > 0 ? "; \(reported) reported only" : "")
    }
}

extension DiffReport {
    /// Judges the functions of every test both sides profiled (see
    /// ``FunctionComparison``), in the order of ``tests``: by the
    /// instructions a simulation counted per function where both sides
    /// have them, else by the sampled CPU time.
    public mutating func attachFunctionChanges(
        baseline: [ProcessProfile], candidate: [ProcessProfile], baselineInstructions: [ProcessInstructions] = [],
        candidateInstructions: [ProcessInstructions] = []
    ) {
        var judged: [String: TestFunctionChanges] = [:]
        if !baseline.isEmpty, !candidate.isEmpty {
            judged = FunctionComparison.changes(
                tests: tests, baseline: baseline, candidate: candidate, groupBy: groupBy, options: options)
        }
        if !baselineInstructions.isEmpty, !candidateInstructions.isEmpty {
            // The instructions' floor of each test, as its row was judged.
            var floors: [String: Double] = [:]
            for row in rows where MetricDefaults.isInstructions(row.name) {
                floors[MetricDefaults.testPart(of: row.name)] = row.relativeFloor
            }
            let counted = FunctionComparison.changes(
                tests: tests, baselineInstructions: baselineInstructions,
                candidateInstructions: candidateInstructions, groupBy: groupBy, options: options,
                relativeFloor: { floors[$0] ?? MetricDefaults.instructionFloor })
            judged.merge(counted) { _, instructions in instructions }
        }
        functionChanges = tests.compactMap { judged[$0.displayName] }
    }
}
