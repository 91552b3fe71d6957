import Foundation
import StrobeFlameGraph
import StrobeResults

/// A run as the history stores it: the results file's run, the key it is
/// stored under, the comparison it was part of, and every metric's
/// per-process summaries.
public struct RunRecord: Sendable, Hashable {
    /// The run, as its results file holds it.
    public var run: PerfRun
    /// The key: the run id, or for a file written before run ids existed
    /// `sha256:` and the digest of its canonical encoding, so that adding
    /// the same file twice still stores it once.
    public var key: String
    /// The `strobe compare` this run was a side of, if known.
    public var comparison: String?
    /// `baseline` or `candidate` in that comparison.
    public var side: String?
    /// Every metric's summaries, by test then metric, in the run's order.
    public var summaries: [[MetricSummary]]
    /// Per test, in the run's order, the call stacks of its CPU profile
    /// (`--profile`) with each one's CPU time per iteration in nanoseconds,
    /// the largest ``FlameStack/keptStacks`` of them: what a differential
    /// flame graph of a change in the history is drawn from. Empty for a
    /// test without a profile.
    public var stacks: [[FlameStack]]

    /// The record of `run`, with the comparison and side it belonged to.
    ///
    /// A test that ran with `--profile` keeps its leading functions as
    /// metrics of their own (``profileMetrics(of:)``), so the history stores
    /// and exports them like any metric and `strobe trend` can say which
    /// functions a change brought; a test with counted instructions keeps
    /// its functions' counts the same way (``instructionMetrics(of:)``). A
    /// simulated run (`metadata.simulated`) keeps its counts and leaves out
    /// its times and resource readings (``isSimulatorReading(_:)``), which
    /// describe the simulator, not the code. The profile's call stacks are
    /// kept apart (``stacks``).
    public init(run: PerfRun, comparison: String? = nil, side: String? = nil) {
        key = run.metadata.runID.isEmpty ? Self.contentKey(of: run) : run.metadata.runID
        stacks = run.tests.map { test in
            test.profile.map { FlameStack.largest(FlameStack.perIteration([$0])) } ?? []
        }
        var kept = run
        for index in kept.tests.indices {
            if run.metadata.simulated {
                kept.tests[index].metrics.removeAll(where: Self.isSimulatorReading)
            }
            kept.tests[index].metrics += Self.profileMetrics(of: kept.tests[index])
            kept.tests[index].metrics += Self.instructionMetrics(of: kept.tests[index])
            kept.tests[index].profile = nil
            kept.tests[index].instructionProfile = nil
        }
        self.run = kept
        self.comparison = comparison
        self.side = side
        summaries = MetricSummary.summaries(of: kept, replicateName: key)
    }

    /// The call stacks kept of the test at `position` (``stacks``); none
    /// for a test without a profile or past the end.
    public func stacks(ofTest position: Int) -> [FlameStack] {
        stacks.indices.contains(position) ? stacks[position] : []
    }

    /// The prefix of the metrics a test's profile becomes: `profile:NAME`.
    public static let profileMetricPrefix = "profile:"

    /// The most functions of a test's profile the history keeps.
    public static let profileFunctionsKept = 20

    /// The leading functions of `test`'s profile as metrics: per function
    /// holding at least 2% of the test's samples but not (nearly) all of
    /// them, its inclusive CPU time per iteration in ns (one value: the
    /// process's), the largest ``profileFunctionsKept`` of them; none
    /// without a profile, or where the test already has such metrics.
    static func profileMetrics(of test: PerfTestResult) -> [PerfMetric] {
        guard let profile = test.profile, profile.sampleCount > 0, profile.iterations > 0 else { return [] }
        let total = profile.cpuPerIteration
        return leadingFunctions(
            of: test, profile.timePerIteration.mapValues(\.inclusive),
            where: { $0 >= 0.02 * total && $0 < 0.98 * total }, atMost: profileFunctionsKept,
            prefix: profileMetricPrefix, unit: "ns")
    }

    /// A metric `PREFIX` + name in `unit` for each function whose inclusive
    /// amount per iteration passes `kept`, its amount the one value, the
    /// largest `limit` of them (largest first); none where `test` already
    /// has metrics of that prefix.
    private static func leadingFunctions(
        of test: PerfTestResult, _ inclusive: [String: Double], where kept: (Double) -> Bool, atMost limit: Int,
        prefix: String, unit: String
    ) -> [PerfMetric] {
        guard !test.metrics.contains(where: { $0.name.hasPrefix(prefix) }) else { return [] }
        return inclusive.filter { kept($0.value) }
            .sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .prefix(limit)
            .map { PerfMetric(name: prefix + $0.key, unit: unit, samples: [$0.value]) }
    }

    /// The prefix of the metrics a test's instruction profile becomes:
    /// `instructions:NAME`.
    public static let instructionMetricPrefix = "instructions:"

    /// The share of a test's instructions a function must hold (inclusive)
    /// for the history to keep its count: 1%.
    public static let instructionShareKept = 0.01

    /// The most functions of a test's instruction profile the history keeps.
    public static let instructionFunctionsKept = 50

    /// Whether `metric` of a simulated run says nothing of the code
    /// (``PerfMetric/isSimulatorReading``, the rule a comparison keeps too).
    public static func isSimulatorReading(_ metric: PerfMetric) -> Bool { metric.isSimulatorReading }

    /// The functions of `test`'s instruction profile as metrics: per
    /// function holding at least ``instructionShareKept`` of the test's
    /// instructions, its inclusive instructions per iteration (unit
    /// `count`, one value: the process's), the largest
    /// ``instructionFunctionsKept`` of them; none without an instruction
    /// profile, or where the test already has such metrics.
    static func instructionMetrics(of test: PerfTestResult) -> [PerfMetric] {
        guard let profile = test.instructionProfile, profile.iterations > 0, profile.total > 0 else { return [] }
        let total = profile.totalPerIteration
        return leadingFunctions(
            of: test, profile.countPerIteration.mapValues(\.inclusive), where: { $0 >= instructionShareKept * total },
            atMost: instructionFunctionsKept, prefix: instructionMetricPrefix, unit: "count")
    }

    /// The branch measured: the run's `branch` tag, or "".
    public var branch: String { run.metadata.tags["branch"] ?? "" }

    /// The key of a run without a run id: `sha256:` and the hex digest of
    /// the file it encodes to.
    static func contentKey(of run: PerfRun) -> String {
        "sha256:" + SHA256Digest.hex(ResultsFile.encode(run))
    }

    /// The metrics of the record, flattened: the test's position and name,
    /// the metric's position, the metric and its summary.
    package var metricRows:
        [(testPosition: Int, test: String, position: Int, metric: PerfMetric, summary: MetricSummary)]
    {
        var rows: [(testPosition: Int, test: String, position: Int, metric: PerfMetric, summary: MetricSummary)] = []
        for (testPosition, test) in run.tests.enumerated() {
            for (position, metric) in test.metrics.enumerated() {
                rows.append((testPosition, test.name, position, metric, summaries[testPosition][position]))
            }
        }
        return rows
    }

    /// Each (test, metric) of the run once with its unit, sorted, in the
    /// order writers lock them in (so that two writers never wait on each
    /// other in a cycle).
    package var units: [(test: String, metric: String, unit: String)] {
        var seen: [MetricName: String] = [:]
        for test in run.tests {
            for metric in test.metrics where seen[MetricName(test: test.name, metric: metric.name)] == nil {
                seen[MetricName(test: test.name, metric: metric.name)] = metric.unit
            }
        }
        return seen.sorted { ($0.key.test, $0.key.metric) < ($1.key.test, $1.key.metric) }
            .map { ($0.key.test, $0.key.metric, $0.value) }
    }

    /// The first metric of this run whose unit differs between two of its
    /// own samples lists, if any: a run cannot be stored with two units for
    /// one metric.
    package var internalUnitConflict: HistoryError? {
        var seen: [MetricName: String] = [:]
        for test in run.tests {
            for metric in test.metrics {
                let name = MetricName(test: test.name, metric: metric.name)
                if let unit = seen[name], unit != metric.unit {
                    return HistoryError(
                        .unitChanged,
                        "metric \(test.name)/\(metric.name) of suite \(run.metadata.suite) is in both \(unit) and "
                            + "\(metric.unit) within run \(key)"
                    )
                }
                seen[name] = metric.unit
            }
        }
        return nil
    }
}

/// A test's metric, by name.
package struct MetricName: Hashable {
    /// The test's name.
    package var test: String
    /// The metric's name.
    package var metric: String

    /// The metric `metric` of the test `test`.
    package init(test: String, metric: String) {
        self.test = test
        self.metric = metric
    }
}
